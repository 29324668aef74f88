import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, TSX_IMPORT, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { withReachableTsx } from '../src/supervisor/module.ts';

const fixture = join(REPO_ROOT, 'test/fixtures/supervised-worker.ts');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('supervisor: external workers from config.yaml', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: [
        '  - name: pinger',
        `    command: ${process.execPath}`,
        `    args: ["--import", "${TSX_IMPORT}", "${fixture}"]`,
        '    config: {greeting: hello}',
        '  - name: broken',
        '    command: /nonexistent/bin/worker',
      ].join('\n'),
    });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine.stop();
  });

  it('launches the worker with the bus URL and its config, and logs its output to a file', async () => {
    const result = await waitFor(async () => {
      const frame = await client.call('sup::whoami');
      return frame.result as { pid: number; name: string } | undefined;
    }, 15_000);
    expect(result.name).toBe('pinger');
    const { workers } = await client.result('engine::supervisor::list');
    const state = workers.find((w: { name: string }) => w.name === 'pinger');
    expect(state).toMatchObject({ running: true, pid: result.pid, restarts: 0 });
    await waitFor(() => existsSync(state.logFile) && readFileSync(state.logFile, 'utf8').includes('config {"greeting":"hello"}'));
  });

  it('keeps running when a configured worker cannot be launched, and says why', async () => {
    await waitFor(() => /broken/.test(engine.logs()) && /failed to launch|ENOENT/.test(engine.logs()), 10_000);
    expect((await client.call('engine::functions::list')).result).toBeDefined();
  });

  it('restarts a worker that crashes', async () => {
    const before = (await client.result('sup::whoami')) as { pid: number };
    process.kill(before.pid, 'SIGKILL');
    const after = await waitFor(async () => {
      const frame = await client.call('sup::whoami');
      const r = frame.result as { pid: number } | undefined;
      return r && r.pid !== before.pid ? r : undefined;
    }, 15_000);
    expect(after.pid).not.toBe(before.pid);
    const { workers } = await client.result('engine::supervisor::list');
    expect(workers.find((w: { name: string }) => w.name === 'pinger').restarts).toBeGreaterThanOrEqual(1);
  });

  it('stops its workers when the engine stops', async () => {
    const { pid } = (await client.result('sup::whoami')) as { pid: number };
    expect(alive(pid)).toBe(true);
    expect(await engine.stop()).toBe(0);
    await waitFor(() => !alive(pid), 8000);
  });
});

describe('supervisor: workers left running by an engine that was killed', () => {
  // a worker that reconnects and survives a closed output pipe, as SDK workers do
  const lingering = join(REPO_ROOT, 'test/fixtures/reconnecting-worker.ts');
  let engine: EngineProcess;
  let client: RawClient | undefined;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: ['  - name: pinger', `    command: ${process.execPath}`, `    args: ["--import", "${TSX_IMPORT}", "${lingering}"]`].join(
        '\n',
      ),
    });
  });
  afterAll(async () => {
    await client?.terminate();
    await engine.stop();
  });

  const whoami = async (c: RawClient) =>
    waitFor(async () => ((await c.call('sup::whoami')).result as { pid: number } | undefined) ?? undefined, 15_000);

  it('are stopped by the next engine on the same data directory, which starts its own', async () => {
    client = await RawClient.worker(engine.busUrl);
    const first = await whoami(client);
    await waitFor(
      () =>
        existsSync(join(engine.dataDir, 'supervisor.json')) &&
        readFileSync(join(engine.dataDir, 'supervisor.json'), 'utf8').includes(`"pid": ${first.pid}`),
    );
    await client.terminate();
    // SIGKILL: the engine cannot stop its worker, which keeps running on its own
    await engine.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(first.pid)).toBe(true);

    await engine.restart();
    await waitFor(() => !alive(first.pid), 8000);
    expect(engine.logs()).toMatch(
      new RegExp(`stopping worker "pinger" \\(pid ${first.pid}\\) left running by an engine that did not shut down`),
    );
    client = await RawClient.worker(engine.busUrl);
    const second = await whoami(client);
    expect(second.pid).not.toBe(first.pid);
    expect(alive(second.pid)).toBe(true);
  }, 60_000);

  it('leaves no record after a clean stop, and never signals a pid that now runs another program', async () => {
    const file = join(engine.dataDir, 'supervisor.json');
    const { pid } = (await (client as RawClient).result('sup::whoami')) as { pid: number };
    await client?.terminate();
    client = undefined;
    expect(await engine.stop()).toBe(0);
    expect(existsSync(file)).toBe(false);
    await waitFor(() => !alive(pid), 8000);
    // a record whose pid now belongs to someone else (this test process): left alone
    writeFileSync(file, JSON.stringify({ engine_pid: 999_999_999, workers: [{ name: 'pinger', pid: process.pid, cmdline: 'not this' }] }));
    const seen = engine.logs().length;
    await engine.restart();
    expect(alive(process.pid)).toBe(true);
    expect(engine.logs().slice(seen)).toMatch(/pinger.*started/);
    expect(engine.logs().slice(seen)).not.toMatch(/left running by an engine/);
  }, 60_000);
});

describe('supervisor: `node --import tsx` workers in a folder without tsx', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    // the config sits in a temp folder with no node_modules: `tsx` cannot resolve from there
    engine = await startEngine({
      workersYaml: ['  - name: ts-worker', '    command: node', `    args: ["--import", "tsx", "${fixture}"]`].join('\n'),
    });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine.stop();
  });

  it("runs with the engine's own tsx instead of dying with ERR_MODULE_NOT_FOUND", async () => {
    const result = await waitFor(async () => (await client.call('sup::whoami')).result as { name: string } | undefined, 15_000);
    expect(result.name).toBe('ts-worker');
    const { workers } = await client.result('engine::supervisor::list');
    expect(workers.find((w: { name: string }) => w.name === 'ts-worker')).toMatchObject({ running: true, restarts: 0 });
  });

  it('leaves the arguments alone where tsx resolves, and for commands other than node', () => {
    const args = ['--import', 'tsx', 'w.ts'];
    expect(withReachableTsx('node', args, REPO_ROOT)).toEqual(args);
    expect(withReachableTsx('python3', args, tmpdir())).toEqual(args);
    const lent = withReachableTsx('/usr/bin/node', args, tmpdir());
    expect(lent[1]).toMatch(/^file:\/\/.*tsx/);
    expect(withReachableTsx('node', ['--import=tsx', 'w.ts'], tmpdir())[0]).toMatch(/^--import=file:\/\/.*tsx/);
  });
});
