import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { type EngineProcess, REPO_ROOT, startEngine, tsEntryArgs, waitFor } from '../../../test/harness.ts';

// Test rig of the worktree worker: real git repositories in a temp directory (a bare "origin"
// and a clone), a real engine with state, queue and cron, and the worker as its own process
// (src/main.ts, what `eng-worktree` and the engine supervisor run).

const WORKER = join(REPO_ROOT, 'packages/worktree/src/main.ts');
/** The worker's node arguments: its compiled file (half the CPU of tsx per start), resolved once. */
const WORKER_ARGS = await tsEntryArgs(WORKER);

/** Git identity and an empty global config, so git never prompts and never reads the user's settings. */
export function gitEnv(home: string): Record<string, string> {
  const globalConfig = join(home, 'gitconfig');
  writeFileSync(globalConfig, '[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n');
  return {
    GIT_AUTHOR_NAME: 'Test Author',
    GIT_AUTHOR_EMAIL: 'author@example.test',
    GIT_COMMITTER_NAME: 'Test Committer',
    GIT_COMMITTER_EMAIL: 'committer@example.test',
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  };
}

export interface Repos {
  dir: string;
  origin: string;
  /** The clone worktrees are made from; `main` is checked out here. */
  repo: string;
  root: string;
  env: Record<string, string>;
  git(cwd: string, ...args: string[]): string;
  /** Write files and commit them in `cwd`; returns the new HEAD. */
  commit(cwd: string, files: Record<string, string>, message?: string): string;
  head(cwd: string, rev?: string): string;
}

export function makeRepos(): Repos {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'eng-wt-')));
  const env = gitEnv(dir);
  const run = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const origin = join(dir, 'origin.git');
  const repo = join(dir, 'repo');
  const root = join(dir, 'worktrees');
  run(dir, '-c', 'init.defaultBranch=main', 'init', '--quiet', '--bare', origin);
  run(dir, '-c', 'init.defaultBranch=main', 'init', '--quiet', repo);
  const commit = (cwd: string, files: Record<string, string>, message = 'change') => {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(cwd, name, '..'), { recursive: true });
      writeFileSync(join(cwd, name), text);
    }
    run(cwd, 'add', '--all');
    run(cwd, 'commit', '--quiet', '-m', message);
    return run(cwd, 'rev-parse', 'HEAD');
  };
  commit(repo, { 'README.md': '# demo\n', 'src/app.txt': 'line 1\nline 2\nline 3\n' }, 'initial');
  run(repo, 'remote', 'add', 'origin', origin);
  run(repo, 'push', '--quiet', 'origin', 'main');
  run(repo, 'branch', '--quiet', '--set-upstream-to=origin/main');
  return { dir, origin, repo, root, env, git: run, commit, head: (cwd, rev = 'HEAD') => run(cwd, 'rev-parse', rev) };
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  ready: Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** `env` is merged over the test's own environment; a variable set to undefined is left out. */
export function startWorker(busUrl: string, env: Record<string, string | undefined>): WorkerProcess {
  let output = '';
  const merged: Record<string, string | undefined> = { ...process.env, ENG_URL: busUrl, ENG_TRACING: 'false', ...env };
  const child = spawn(process.execPath, WORKER_ARGS, {
    cwd: REPO_ROOT,
    env: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as Record<string, string>,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worktree worker not ready in 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/: ready — /.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`worktree worker exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  ready.catch(() => undefined);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const waitExit = () => new Promise<void>((r) => (exited() ? r() : child.once('exit', () => r())));
  return {
    child,
    output: () => output,
    ready,
    async stop() {
      if (exited()) return;
      const done = waitExit();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
      await done;
      clearTimeout(timer);
    },
    async kill() {
      if (exited()) return;
      const done = waitExit();
      child.kill('SIGKILL');
      await done;
    },
  };
}

export interface Rig {
  engine: EngineProcess;
  worker: WorkerProcess;
  client: EngClient;
  repos: Repos;
  /** Start a fresh worker process (after a kill) with the same environment. */
  restartWorker(extraEnv?: Record<string, string | undefined>): Promise<void>;
  stop(): Promise<void>;
}

export interface RigOptions {
  /** Seed of the worktree configuration entry (ENG_WORKER_CONFIG), merged over the test root. */
  config?: Record<string, unknown>;
  workerEnv?: Record<string, string | undefined>;
  /** State and queue on disk (SQLite) instead of in memory. */
  durable?: boolean;
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const repos = makeRepos();
  const stateAdapter = options.durable
    ? `{ name: kv, config: { store_method: file_based, file_path: ${join(repos.dir, 'state.db')} } }`
    : '{ name: kv, config: { store_method: in_memory } }';
  const queueAdapter = options.durable ? `{ name: sqlite, config: { file_path: ${join(repos.dir, 'queue.db')} } }` : '{ name: memory }';
  const engine = await startEngine({
    workersYaml: [
      '  - name: eng-state',
      `    config: { adapter: ${stateAdapter} }`,
      '  - name: eng-queue',
      `    config: { adapter: ${queueAdapter}, default_queue_config: { backoff_ms: 200 } }`,
      '  - name: eng-cron',
      '',
    ].join('\n'),
    env: { ENG_LOG_LEVEL: 'warn' },
  });
  const env = () => ({
    ...repos.env,
    ENG_WORKER_CONFIG: JSON.stringify({ worktree_root: repos.root, ...options.config }),
    ...options.workerEnv,
  });
  const rig: Rig = {
    engine,
    repos,
    worker: startWorker(engine.busUrl, env()),
    client: undefined as unknown as EngClient,
    async restartWorker(extraEnv = {}) {
      await rig.worker.kill();
      rig.worker = startWorker(engine.busUrl, { ...env(), ...extraEnv });
      await rig.worker.ready;
    },
    async stop() {
      await rig.client?.close();
      await rig.worker.stop();
      await engine.stop();
    },
  };
  try {
    await rig.worker.ready;
    rig.client = connect(engine.busUrl, { name: 'worktree-test', tracing: false, reconnect: { maxRetries: 0 } });
    await rig.client.ready({ timeoutMs: 10_000 });
  } catch (err) {
    await rig.worker.stop();
    await engine.stop();
    throw err;
  }
  return rig;
}

const NO_SUCH_WORKTREE = 'wt_000000000000';

/**
 * Change the worktree configuration entry (`patch` over the stored value, `gates` merged) and wait
 * until the worker runs on it: the change goes out with gates.allow_land off, then a second one
 * turns it back on; a land of an unknown worktree answers W500 and then W200 once each arrived.
 */
export async function configure(client: EngClient, patch: Record<string, unknown>): Promise<void> {
  const call = <T = any>(fn: string, payload: unknown) => client.call<T>(fn, payload, { timeoutMs: 20_000 });
  const probe = (code: string) =>
    waitFor(
      async () =>
        (await failure(call('worktree::land', { worktree_id: NO_SUCH_WORKTREE, target_branch: 'main' })).catch(() => undefined))?.code ===
        code,
      10_000,
      50,
    );
  const current = (await call<{ value: Record<string, any> }>('configuration::get', { id: 'worktree' })).value;
  const gates = { ...current.gates, ...(patch.gates as Record<string, unknown> | undefined) };
  const value = { ...current, ...patch, gates };
  await call('configuration::set', { id: 'worktree', value: { ...value, gates: { ...gates, allow_land: false } } });
  await probe('W500');
  await call('configuration::set', { id: 'worktree', value });
  await probe(gates.allow_land === false ? 'W500' : 'W200');
}

/** Bind `type` with `config` to a fresh function of `client` and collect what it receives. */
export async function recordEvents<T = Record<string, unknown>>(client: EngClient, type: string, config: unknown = {}) {
  const events: T[] = [];
  const id = `test::on::${type}::${Math.random().toString(36).slice(2)}`;
  const fn = client.registerFunction(id, (input: Record<string, unknown>) => {
    // the engine adds the sender's worker id to worker-to-worker payloads
    const { _caller_worker_id: _, ...event } = input;
    events.push(event as T);
    return {};
  });
  const trigger = client.registerTrigger({ type, function_id: id, config });
  await client.call('engine::functions::list', {});
  return {
    events,
    unbind() {
      trigger.unregister();
      fn.unregister();
    },
  };
}

/** The error a call fails with (the test fails when it succeeds). */
export async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to fail');
}

export { waitFor };
