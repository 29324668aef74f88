import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, TSX_IMPORT, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

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
