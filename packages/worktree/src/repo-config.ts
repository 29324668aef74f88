import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

// A repository's own git configuration (.git/config, config.worktree and what they include) is
// writable by whoever works in it, an agent included, and several keys there name a command git
// runs: filters, merge and diff drivers, ssh, credential helpers, signing programs. The worker did
// not create the repositories it serves, so it runs git with each such key that the repository
// sets overridden: back to the value the operator's own (system, global) configuration gives, or
// to a value that runs nothing the repository chose. fsmonitor and hooks are off for every call
// (git.ts); this covers the keys whose names cannot be known in advance (`filter.<driver>.smudge`).

/** One entry of `git config --list --show-scope -z`. */
export interface ConfigEntry {
  scope: string;
  /** As git prints it: section and name lowercase, a subsection as written. */
  key: string;
  /** Absent for a bare `[section] key` line (boolean true). */
  value?: string;
}

/** What to add to a git call so the repository's own command keys do nothing. */
export interface ConfigOverrides {
  /** Settings for GIT_CONFIG_COUNT/KEY_n/VALUE_n (unlike `-c`, a subsection may contain `=`). */
  settings: Array<[string, string]>;
  /** Extra environment (GIT_PROXY_COMMAND). */
  env: Record<string, string>;
  /** `--upload-pack` for a fetch: git keeps the first `remote.<name>.uploadpack` it reads, so no override can replace it. */
  uploadPack?: string;
}

export const NO_OVERRIDES: ConfigOverrides = { settings: [], env: {} };

// Every key handled below (COMMAND_KEYS, credential helpers, gitProxy, uploadpack) contains one of
// these words, and so does an include directive (which pulls in files the check does not read).
// Section and variable names are plain ASCII words that git never splits across lines.
const COMMAND_WORDS =
  /filter|driver|textconv|command|external|gitproxy|askpass|editor|helper|uploadpack|program|gpgsign|showsignature|include/i;

/**
 * Whether the repository at `cwd` may set a command key: false only when its own config files
 * (the common dir's `config` and the worktree's `config.worktree`, found the way git finds them)
 * contain none of COMMAND_WORDS, so the common case reads two small files instead of starting
 * `git config --list`. Anything unusual (no `.git` in `cwd`, an unreadable file) answers true.
 */
export function mayRunCommands(cwd: string): boolean {
  try {
    const dotGit = join(cwd, '.git');
    let gitDir = dotGit;
    if (!statSync(dotGit).isDirectory()) {
      const match = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
      if (!match) return true;
      gitDir = resolve(cwd, (match[1] as string).trim());
    }
    // any git dir may name another common dir (linked worktrees do); git honours it everywhere
    const commonDir = readIfExists(join(gitDir, 'commondir'));
    const common = commonDir === undefined ? gitDir : resolve(gitDir, commonDir.trim());
    for (const file of [join(common, 'config'), join(gitDir, 'config.worktree')]) {
      const text = readIfExists(file);
      if (text !== undefined && COMMAND_WORDS.test(text)) return true;
    }
    return false;
  } catch {
    return true;
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'latin1');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Parse `git config --list --show-scope -z`: `scope NUL key [LF value] NUL` per entry. */
export function parseConfigList(text: string): ConfigEntry[] {
  const parts = text.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const scope = parts[i] as string;
    const item = parts[i + 1] as string;
    const nl = item.indexOf('\n');
    entries.push(nl < 0 ? { scope, key: item } : { scope, key: item.slice(0, nl), value: item.slice(nl + 1) });
  }
  return entries;
}

// the scopes the repository controls; system, global and command-line settings are the operator's
const REPOSITORY_SCOPES = new Set(['local', 'worktree']);

/**
 * Keys that carry a command, with what replaces the repository's value when the operator's
 * configuration has none. Each neutral value is checked against git 2.39: an empty filter is no
 * filter, but an empty merge driver, textconv or ssh command would fail or, worse for ssh, run the
 * host name as the command.
 */
const COMMAND_KEYS: Array<[RegExp, string]> = [
  [/^filter\..+\.(smudge|clean|process)$/s, ''],
  [/^filter\..+\.required$/s, 'false'], // a required filter that was emptied would fail the checkout
  [/^merge\..+\.driver$/s, 'false'], // the file conflicts: its owner merges it by hand
  [/^diff\..+\.textconv$/s, 'cat'],
  [/^diff\..+\.command$/s, 'false'],
  [/^diff\.external$/, 'false'],
  [/^core\.sshcommand$/, 'ssh'],
  [/^core\.askpass$/, ''],
  [/^core\.editor$/, 'true'],
  [/^sequence\.editor$/, 'true'],
  [/^core\.alternaterefscommand$/, 'true'],
  [/^gpg\.program$/, 'gpg'],
  [/^gpg\.openpgp\.program$/, 'gpg'],
  [/^gpg\.x509\.program$/, 'gpgsm'],
  [/^gpg\.ssh\.program$/, 'ssh-keygen'],
  [/^gpg\.ssh\.defaultkeycommand$/, 'false'],
  [/^(commit|tag)\.gpgsign$/, 'false'],
  [/^log\.showsignature$/, 'false'],
];

const CREDENTIAL_HELPER = /^credential\.(.+\.)?helper$/s;

/** The overrides that undo every command key the repository's own configuration sets. */
export function overridesFor(entries: readonly ConfigEntry[]): ConfigOverrides {
  const repoKeys = new Set<string>();
  const trusted = new Map<string, string>(); // last value of each key outside the repository's scopes
  for (const e of entries) {
    if (REPOSITORY_SCOPES.has(e.scope)) repoKeys.add(e.key);
    else trusted.set(e.key, e.value ?? 'true');
  }
  const settings: Array<[string, string]> = [];
  const env: Record<string, string> = {};
  let uploadPack: string | undefined;
  let credentials = false;
  for (const key of repoKeys) {
    const lower = key.toLowerCase();
    const rule = COMMAND_KEYS.find(([pattern]) => pattern.test(lower));
    if (rule) {
      settings.push([key, trusted.get(key) ?? rule[1]]);
      // an emptied filter must not be required either, or git refuses to check the file out
      const filter = /^filter\.(.+)\.(smudge|clean|process)$/s.exec(key);
      if (filter && !repoKeys.has(`filter.${filter[1]}.required`)) {
        settings.push([`filter.${filter[1]}.required`, trusted.get(`filter.${filter[1]}.required`) ?? 'false']);
      }
    } else if (CREDENTIAL_HELPER.test(lower)) {
      credentials = true;
    } else if (lower === 'core.gitproxy') {
      // git keeps the first value it reads, the repository's when the operator has none; the variable beats them all
      env.GIT_PROXY_COMMAND = '';
    } else if (/^remote\..+\.uploadpack$/s.test(lower) && !trusted.has(key)) {
      uploadPack = 'git-upload-pack';
    }
  }
  if (credentials) {
    // an empty helper empties the list; then the operator's helpers again, in their order
    settings.push(['credential.helper', '']);
    for (const e of entries) {
      if (!REPOSITORY_SCOPES.has(e.scope) && CREDENTIAL_HELPER.test(e.key.toLowerCase()) && e.value) settings.push([e.key, e.value]);
    }
  }
  return { settings, env, ...(uploadPack ? { uploadPack } : {}) };
}
