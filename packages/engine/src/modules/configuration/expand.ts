/**
 * `${VAR}` and `${VAR:default}` in a string, expanded against the engine's environment. Only
 * secret fields whose schema declares `"x-eng-env"` expand, and only in what
 * `configuration::reveal` returns (secrets.ts `expandSecrets`): anyone who may `set` a readable
 * field must not be able to read the engine's environment back through `get` (issue 24 item 10).
 *
 * `allowed` names the variables that may be read (`true`: any); another name stays as written.
 * An unset variable takes its default, else expands to the empty string.
 */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;

export function expandEnv(value: unknown, allowed: ReadonlySet<string> | true, env: NodeJS.ProcessEnv = process.env): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    return value.replace(PLACEHOLDER, (whole, name: string, fallback?: string) =>
      allowed === true || allowed.has(name) ? (env[name] ?? fallback ?? '') : whole,
    );
  }
  if (Array.isArray(value)) return value.map((v) => expandEnv(v, allowed, env));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, allowed, env)]));
  return value;
}
