import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, engArgs, freePort, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { ensureBundle, startEngineWithConsole } from './helpers.ts';

// issue 7 §6: `eng worker add console`, then `eng start` launches it, restarts it when it dies,
// stops it with the engine, and `eng worker list` shows whether it runs.

function eng(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, engArgs(args), {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface State {
  name: string;
  pid: number | null;
  running: boolean;
  restarts: number;
  url: string | null;
  logFile: string;
}

describe('eng worker add console + eng start', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let addOutput: string;
  let written: string;

  beforeAll(async () => {
    ensureBundle();
    const dir = mkdtempSync(join(tmpdir(), 'eng-cw-sup-'));
    const file = join(dir, 'config.yaml');
    const busPort = await freePort();
    writeFileSync(file, `# my engine\nworkers:\n  - name: eng-worker-manager\n    config:\n      port: ${busPort}\n`);
    const add = eng(['worker', 'add', 'console', '-c', file]);
    expect(add.code).toBe(0);
    addOutput = add.stdout;
    written = readFileSync(file, 'utf8');
    // same file, with free ports instead of the defaults so the test never collides with `npm start`
    const yaml = written.replace(`port: ${busPort}`, 'port: {{BUS_PORT}}').replace('http_port: 3113', 'http_port: {{CONSOLE_PORT}}');
    engine = await startEngine({ configYaml: yaml, env: { SKIP_WEB_BUILD: '1' } });
    client = await RawClient.worker(engine.busUrl);
  }, 120_000);
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  const consoleState = async (): Promise<State> => {
    const { workers } = await client.result('engine::supervisor::list', {});
    return workers.find((w: State) => w.name === 'console');
  };

  it('writes a console entry with its default config into the chosen file', () => {
    expect(addOutput).toMatch(/added console to .*config\.yaml/);
    expect(written).toContain('# my engine');
    expect(written).toMatch(/- name: console\n\s+config:\n\s+http_port: 3113\n/);
  });

  it('launches the worker on start and prints its URL once it serves', async () => {
    const url = `http://127.0.0.1:${engine.ports.CONSOLE}/`;
    await waitFor(() => engine.logs().includes(`eng: worker ready ${JSON.stringify({ name: 'console', url })}`), 30_000);
    expect(engine.logs()).toMatch(/workers {5}console \(starting\)/);
    expect(engine.logs()).toContain(`  console     ${url}  (web console)`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('id="root"');
    const state = await consoleState();
    expect(state).toMatchObject({ running: true, restarts: 0, url });
    const status = await client.result('console::status', {});
    expect(status).toMatchObject({ http_port: engine.ports.CONSOLE, engine_url: engine.busUrl, url });
    await waitFor(() => readFileSync(state.logFile, 'utf8').includes('console ready — UI on'), 5000);
  });

  it('`eng worker list` shows the configured workers and that the console runs', async () => {
    const list = eng(['worker', 'list', '-c', engine.configPath, '--json']);
    expect(list.code).toBe(0);
    const parsed = JSON.parse(list.stdout);
    expect(parsed.engine).toEqual({ url: engine.busUrl, running: true });
    const state = await consoleState();
    expect(parsed.workers).toEqual([
      expect.objectContaining({ name: 'eng-worker-manager', kind: 'module', running: true }),
      expect.objectContaining({ name: 'console', kind: 'worker', running: true, pid: state.pid, url: state.url }),
    ]);
    const human = eng(['worker', 'list', '-c', engine.configPath]);
    expect(human.stdout).toContain(`engine running at ${engine.busUrl}`);
    expect(human.stdout).toMatch(new RegExp(`console\\s+worker\\s+running\\s+pid ${state.pid}\\s+${state.url}`));
  });

  it('restarts the worker when it is killed', async () => {
    const before = await consoleState();
    process.kill(before.pid as number, 'SIGKILL');
    const after = await waitFor(async () => {
      const state = await consoleState();
      return state.running && state.pid !== before.pid && state.url ? state : undefined;
    }, 30_000);
    expect(after.restarts).toBeGreaterThanOrEqual(1);
    expect((await fetch(after.url as string)).status).toBe(200);
    expect(engine.logs()).toMatch(/console.*exited \(SIGKILL\); restarting/);
  }, 40_000);

  it('stops the worker with the engine; `eng worker list` then says the engine is not running', async () => {
    const { pid } = await consoleState();
    expect(alive(pid as number)).toBe(true);
    await client.terminate();
    expect(await engine.stop()).toBe(0);
    expect(alive(pid as number)).toBe(false);
    const list = eng(['worker', 'list', '-c', engine.configPath]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`engine not running (nothing answered at ${engine.busUrl})`);
    expect(list.stdout).toMatch(/console\s+worker\s+web console/);
  }, 30_000);
});

describe('a console worker whose engine is killed', () => {
  it('exits by itself and frees its port, since no SIGTERM will come', async () => {
    const engine = await startEngineWithConsole();
    const client = await RawClient.worker(engine.busUrl);
    const state = await waitFor(async () => {
      const { workers } = await client.result('engine::supervisor::list', {});
      const found = workers.find((w: State) => w.name === 'console') as State | undefined;
      return found?.running && found.url ? found : undefined;
    }, 30_000);
    const pid = state.pid as number;
    await engine.kill('SIGKILL');
    await waitFor(() => !alive(pid), 10_000);
    // the port is free again for the console the next engine launches
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(engine.ports.CONSOLE, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => server.close(r));
    await client.terminate();
  }, 60_000);
});
