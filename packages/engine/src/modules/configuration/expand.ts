/**
 * `${VAR}` and `${VAR:default}` in string values, expanded against the engine's environment on
 * every read (the reference's behaviour), so a value can name a variable instead of holding it.
 * `raw: true` reads skip this. An unset variable without a default expands to the empty string.
 */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;

export function expandEnv(value: unknown, env: NodeJS.ProcessEnv = process.env): unknown {
  if (typeof value === 'string')
    return value.includes('${') ? value.replace(PLACEHOLDER, (_m, name: string, fallback?: string) => env[name] ?? fallback ?? '') : value;
  if (Array.isArray(value)) return value.map((v) => expandEnv(v, env));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env)]));
  return value;
}
