import { spawn } from 'node:child_process';
import { userCommandEnv } from './env.ts';

export interface TestOutcome {
  /** Exit code; null when the command was killed (timeout) or could not start. */
  code: number | null;
  /** The last lines of its output, for the land-blocked message. */
  tail: string;
  /** Why the command could not run at all (W411): not found, not executable. */
  misconfigured?: string;
  timedOut?: boolean;
}

const TAIL_BYTES = 2000;

/**
 * Run a land's test gate in the worktree. A string is a shell command line (the user wrote it as
 * one: `npm test && npm run lint`); an array is an argument vector run without a shell. The
 * command runs in its own process group so a timeout stops everything it started, with the
 * scrubbed environment of a user command (env.ts): `env` on top of the allowlist and the names in
 * `pass`, never a credential.
 */
export function runTestCommand(
  command: string | string[],
  cwd: string,
  timeoutMs: number,
  { env, pass }: { env: Record<string, string>; pass: readonly string[] },
): Promise<TestOutcome> {
  const [file, args] = typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0] as string, command.slice(1)];
  return new Promise((resolve) => {
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
    };
    const child = spawn(file, args, { cwd, env: userCommandEnv(env, pass), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, tail, misconfigured: `test command ${JSON.stringify(file)} could not start: ${err.code ?? err.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (timedOut) resolve({ code: null, tail, timedOut: true });
      else resolve({ code, tail });
    });
  });
}
