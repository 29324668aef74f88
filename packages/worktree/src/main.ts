import { connect } from '@eng/sdk';
import { type StartedWorktreeWorker, startWorktreeWorker } from './worker.ts';

// `eng-worktree` (bin/eng-worktree.js) and the engine supervisor's `worktree` entry: the worktree
// worker as an ordinary worker on the engine bus at ENG_URL.

const USAGE = `usage: eng-worktree

Git worktrees for parallel agents: worktree::create|list|get|validate|claim|release|status|remove|prune|land
and the six worktree::* lifecycle trigger types.

Environment:
  ENG_URL             engine bus (default ws://127.0.0.1:49134)
  ENG_WORKER_NAME     worker name (default worktree)
  ENG_WORKER_CONFIG   JSON seed of the "worktree" configuration entry, e.g. {"worktree_root":"~/.eng/worktrees"}
`;

const STOP_LIMIT_MS = 4000;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const name = process.env.ENG_WORKER_NAME || 'worktree';
const log = (line: string) => process.stdout.write(`${name}: ${line}\n`);
const url = process.env.ENG_URL || 'ws://127.0.0.1:49134';
const printable = url.replace(/\/\/[^@/]*@/, '//');

let started: StartedWorktreeWorker | undefined;
let stopping = false;
const client = connect(url, { name, description: 'git worktrees: lifecycle, claims, land queue, six trigger types' });

const stop = async (why: string) => {
  if (stopping) return;
  stopping = true;
  log(`${why}; shutting down`);
  const limit = setTimeout(() => process.exit(1), STOP_LIMIT_MS);
  limit.unref();
  await started?.stop().catch(() => undefined);
  await client.close().catch(() => undefined);
  process.exit(0);
};
process.once('SIGINT', () => void stop('SIGINT received'));
process.once('SIGTERM', () => void stop('SIGTERM received'));

// launched by an engine (ENG_ENGINE_PID): leave when that engine died without stopping us
const enginePid = Number(process.env.ENG_ENGINE_PID);
if (Number.isInteger(enginePid) && enginePid > 0) {
  setInterval(() => {
    try {
      process.kill(enginePid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') void stop(`the engine (pid ${enginePid}) is gone`);
    }
  }, 2000).unref();
}

try {
  const waiting = setTimeout(() => log(`waiting for the engine at ${printable}`), 3000);
  waiting.unref();
  await client.ready();
  clearTimeout(waiting);
  started = await startWorktreeWorker(client, log);
  if (!stopping) log(`ready — ${started.summary} on ${printable}`);
} catch (err) {
  process.stderr.write(`${name}: ${(err as Error).message}\n`);
  process.exit(78);
}
