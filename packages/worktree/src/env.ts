import { globMatch } from './glob.ts';

// The environment of the children the worker starts. A user command (a land's test command) runs
// code from the worktree, i.e. code an agent wrote: it gets an allowlist, never the worker's own
// environment, so provider keys, tokens and the engine's settings (ENG_URL may carry a password,
// ENG_WORKER_CONFIG the worker's configuration) stay out of its reach. An allowlist also covers
// secrets nobody thought to name: whatever the engine's configuration expands from `${VAR}`, a
// variable not on the list is not passed.

/** Harmless variables every user command gets when the worker has them. */
const ALLOWED = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'CI',
  'NO_COLOR',
  'FORCE_COLOR',
]);
/** Families of harmless variables (locale, Node's own settings, XDG folders); credential-like names still drop. */
const ALLOWED_PREFIXES = ['LC_', 'NODE_', 'XDG_'];

// a word of the name (split at `_`) that names a credential, or a part that does anywhere in it
const SECRET_WORD = /^(KEY|KEYS|PASS|PWD|AUTH|DSN|SESSION|COOKIE|COOKIES|PRIVATE|SIGNATURE|CREDS)$/;
const SECRET_PART = /SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|APIKEY|API_KEY|ACCESS_KEY|CREDENTIAL|PRIVATE_KEY/;

/**
 * Whether a variable's name says it holds a credential (`OPENAI_API_KEY`, `GITHUB_TOKEN`,
 * `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`, `SSH_AUTH_SOCK`, `SENTRY_DSN`…). Such a variable never
 * reaches a user command, not even when the configuration names it.
 */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_PART.test(upper) || upper.split('_').some((word) => SECRET_WORD.test(word));
}

/**
 * The environment of a command the worker runs for a user: the allowlist, plus the names (`*`
 * wildcards) the operator lists in `test_env`, minus anything that looks like a credential, plus
 * `extra` (what the worker tells the command, e.g. ENG_WORKTREE_ID). Every such child is started
 * with this, never with `process.env`.
 */
export function userCommandEnv(
  extra: Record<string, string>,
  pass: readonly string[] = [],
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || looksSecret(name)) continue;
    const allowed = ALLOWED.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p)) || pass.some((p) => globMatch(p, name));
    if (allowed) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * What git itself gets: the worker's environment (ssh agent, proxies, the credential helper's
 * tokens, GIT_CONFIG_GLOBAL: the operator's git setup) without what git never needs and a command
 * slipping through git's configuration must not read: the engine's own variables (ENG_*) and
 * provider API keys.
 */
export function withoutEngineSecrets(source: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    const upper = name.toUpperCase();
    if (upper.startsWith('ENG_') || /API_?KEY/.test(upper)) continue;
    env[name] = value;
  }
  return env;
}
