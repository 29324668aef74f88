import { execFile } from 'node:child_process';
import { W, worktreeError } from './errors.ts';

/**
 * Every git call of the worker goes through here: `execFile` with an argument vector (never a
 * shell string), a timeout, no prompts, no editor, and an environment stripped of the variables
 * that would point git at another repository than the one named by `cwd`.
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
    baseEnv = { ...process.env };
    for (const name of INHERITED_GIT_VARS) delete baseEnv[name];
    Object.assign(baseEnv, {
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '',
      SSH_ASKPASS: '',
      GIT_EDITOR: 'true',
      GIT_SEQUENCE_EDITOR: 'true',
      GIT_MERGE_AUTOEDIT: 'no',
      LC_ALL: 'C',
    });
  }
  return extra ? { ...baseEnv, ...extra } : baseEnv;
}

// `-c` settings for every call: no pager, no interactive hooks into other protocols
const GLOBAL_ARGS = ['-c', 'core.pager=cat', '-c', 'protocol.ext.allow=never', '-c', 'core.hooksPath=/dev/null'];

export function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...GLOBAL_ARGS, ...args],
      { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: MAX_BUFFER, env: gitEnv(options.env), killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (!error) return resolve({ stdout, stderr, code: 0 });
        const e = error as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string };
        if (e.killed || e.signal === 'SIGKILL') {
          return reject(worktreeError(W.GitTimeout, `git ${describe(args)} did not finish within ${options.timeoutMs} ms`));
        }
        if (typeof e.code === 'string') {
          // ENOENT: git missing, or the cwd is gone
          return reject(worktreeError(W.GitFailed, `git ${describe(args)} could not run in ${options.cwd}: ${e.message}`));
        }
        const code = typeof e.code === 'number' ? e.code : 1;
        if (options.allowFail) return resolve({ stdout, stderr, code });
        reject(worktreeError(W.GitFailed, `git ${describe(args)} failed (exit ${code}): ${firstLines(stderr || stdout)}`));
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
