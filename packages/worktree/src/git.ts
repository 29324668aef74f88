import { execFile } from 'node:child_process';
import { withoutEngineSecrets } from './env.ts';
import { W, worktreeError } from './errors.ts';
import { mayRunCommands, NO_OVERRIDES, overridesFor, parseConfigList } from './repo-config.ts';

/**
 * Every git call of the worker goes through here: `execFile` with an argument vector (never a
 * shell string), a timeout, no prompts, no editor, nothing the repository configured to run (see
 * `git` below), and an environment stripped of the variables that would point git at another
 * repository than the one named by `cwd` and of the engine's secrets (env.ts).
 */

export interface GitResult {
  stdout: string;
  stderr: string;
  /** 0 on success; git's exit code otherwise (only with `allowFail`). */
  code: number;
}

export interface GitOptions {
  cwd: string;
  timeoutMs: number;
  /** Resolve with the exit code instead of throwing when git exits non-zero. */
  allowFail?: boolean;
  /** Written to git's stdin. */
  input?: string;
  /** Extra environment (e.g. GIT_OPTIONAL_LOCKS for read-only status). */
  env?: Record<string, string>;
}

const MAX_BUFFER = 64 * 1024 * 1024;

// variables a parent process (a git hook, a shell inside a worktree) may leave set
const INHERITED_GIT_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_CEILING_DIRECTORIES',
  'GIT_PREFIX',
];

let baseEnv: NodeJS.ProcessEnv | undefined;
function gitEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  if (!baseEnv) {
    baseEnv = withoutEngineSecrets(process.env);
    for (const name of INHERITED_GIT_VARS) delete baseEnv[name];
    Object.assign(baseEnv, {
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '',
      SSH_ASKPASS: '',
      GIT_EDITOR: 'true',
      GIT_SEQUENCE_EDITOR: 'true',
      GIT_MERGE_AUTOEDIT: 'no',
      GIT_PAGER: 'cat',
      LC_ALL: 'C',
    });
  }
  return extra ? { ...baseEnv, ...extra } : baseEnv;
}

// `-c` settings for every call: no pager, no ext:: transport (it runs a command), and nothing the
// repository configured to run by itself: no hooks, no fsmonitor daemon or hook, no recursion into
// submodules (whose own configuration the guard below does not read)
const GLOBAL_ARGS = [
  '-c',
  'core.pager=cat',
  '-c',
  'protocol.ext.allow=never',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'submodule.recurse=false',
];

// Subcommands (with the worker's arguments) that read refs and objects only, or write refs: they
// run no filter, driver, transport or signing program, so they skip reading the repository's
// configuration first. Anything else (status, diff, rebase, fetch, worktree add…) reads it.
const INERT = new Set([
  'rev-parse',
  'rev-list',
  'for-each-ref',
  'update-ref',
  'check-ref-format',
  'merge-base',
  'symbolic-ref',
  'branch',
  'remote',
  'patch-id',
  'var',
  'config',
]);
const INERT_WORKTREE = new Set(['list', 'lock', 'unlock', 'prune']);

function inert(args: readonly string[]): boolean {
  const [command, sub] = args;
  return command === 'worktree' ? INERT_WORKTREE.has(sub ?? '') : INERT.has(command ?? '');
}

/**
 * Run git. Before a call that could run a command, the repository's configuration is read and
 * every command key it sets is overridden (repo-config.ts): a filter, merge driver or ssh command
 * an agent wrote into .git/config never runs. Read on every such call, not cached: the file can
 * change between two calls. A repository whose config files name no such key skips the listing.
 */
export async function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  let overrides = NO_OVERRIDES;
  if (!inert(args) && mayRunCommands(options.cwd)) {
    const listing = await run(['config', '--list', '--show-scope', '-z'], [], {
      ...options,
      allowFail: true,
      input: undefined,
      env: undefined,
    });
    if (listing.code !== 0) {
      // an unreadable configuration fails every git call in that folder: say so for this one
      if (options.allowFail) return listing;
      throw worktreeError(
        W.GitFailed,
        `git ${describe(args)} failed: git could not read the configuration in ${options.cwd} (exit ${listing.code}): ${firstLines(listing.stderr)}`,
      );
    }
    overrides = overridesFor(parseConfigList(listing.stdout));
  }
  const argv = overrides.uploadPack && args[0] === 'fetch' ? ['fetch', `--upload-pack=${overrides.uploadPack}`, ...args.slice(1)] : args;
  return run(argv, args, { ...options, env: { ...settingsEnv(overrides.settings), ...overrides.env, ...options.env } });
}

/** GIT_CONFIG_COUNT/KEY_n/VALUE_n for `settings`, after any the worker's own environment already sets. */
function settingsEnv(settings: Array<[string, string]>): Record<string, string> {
  if (settings.length === 0) return {};
  const first = Number(process.env.GIT_CONFIG_COUNT) || 0;
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(first + settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${first + i}`] = key;
    env[`GIT_CONFIG_VALUE_${first + i}`] = value;
  });
  return env;
}

function run(args: readonly string[], shown: readonly string[], options: GitOptions): Promise<GitResult> {
  const label = shown.length > 0 ? shown : args;
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...GLOBAL_ARGS, ...args],
      { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: MAX_BUFFER, env: gitEnv(options.env), killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (!error) return resolve({ stdout, stderr, code: 0 });
        const e = error as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string };
        if (e.killed || e.signal === 'SIGKILL') {
          return reject(worktreeError(W.GitTimeout, `git ${describe(label)} did not finish within ${options.timeoutMs} ms`));
        }
        if (typeof e.code === 'string') {
          // ENOENT: git missing, or the cwd is gone
          return reject(worktreeError(W.GitFailed, `git ${describe(label)} could not run in ${options.cwd}: ${e.message}`));
        }
        const code = typeof e.code === 'number' ? e.code : 1;
        if (options.allowFail) return resolve({ stdout, stderr, code });
        reject(worktreeError(W.GitFailed, `git ${describe(label)} failed (exit ${code}): ${firstLines(stderr || stdout)}`));
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** The trimmed stdout of a git call that must succeed. */
export async function gitOut(args: readonly string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.trim();
}

function describe(args: readonly string[]): string {
  const shown = args.slice(0, 6).join(' ');
  return args.length > 6 ? `${shown} …` : shown;
}

/** A short excerpt of git's output for an error message. */
export function firstLines(text: string, lines = 4): string {
  return text.trim().split('\n').slice(0, lines).join(' | ').slice(0, 600) || '(no output)';
}
