import { type ChildProcess, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { connect } from '@eng/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ENG_CLI, NODE_TS, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { CONSOLE_BIN as BIN, deadPort, makeBundle, type StartedConsole, spawnConsole } from './helpers.ts';

// seed table 4.4: every flag and environment variable, --help, --version; issue 6 §1 shutdown

const bundle = makeBundle();
const running: ChildProcess[] = [];

interface Started extends StartedConsole {
  config(): Promise<any>;
}

function start(args: string[], env: Record<string, string> = {}): Promise<Started> {
  return spawnConsole({ argv: [BIN, ...args], webDir: bundle, running, env, cwd: REPO_ROOT, timeoutMs: 15_000 }).then((started) => ({
    ...started,
    config: async () => (await fetch(`${started.url}/_console/config`)).json(),
  }));
}

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_CONSOLE_WEB_DIR: bundle, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('eng-console CLI', () => {
  it('--help lists every flag and environment variable', () => {
    const res = run(['--help']);
    expect(res.status).toBe(0);
    for (const flag of [
      '-p, --port',
      '--host',
      '--engine-host',
      '--engine-port',
      '--ws-port',
      '--bridge-port',
      '--no-otel',
      '--otel-service-name',
      '--enable-flow',
      '--version',
      'OTEL_DISABLED',
      'OTEL_SERVICE_NAME',
      'ENG_ENABLE_FLOW',
    ]) {
      expect(res.stdout).toContain(flag);
    }
  });

  it('--version and -v print the version', () => {
    expect(run(['--version']).stdout.trim()).toBe('0.1.0');
    expect(run(['-v']).stdout.trim()).toBe('0.1.0');
  });

  it('eng console runs the same CLI', () => {
    const res = spawnSync(process.execPath, [...NODE_TS, ENG_CLI, 'console', '--help'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('Usage: eng-console');
    expect(res.stdout).toContain('--bridge-port');
  });

  it('refuses bad values with exit code 2 and names the flag', () => {
    const res = run(['--port', 'abc']);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('--port must be a port number (0-65535), got "abc"');
    const unknown = run(['--frobnicate']);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain("unknown option '--frobnicate'");
  });

  it('reports a busy port with exit code 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const res = run(['-p', String(port)]);
    blocker.close();
    expect(res.status).toBe(1);
    expect(res.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
  });

  it('applies every flag (long and short forms)', async () => {
    const c = await start([
      '-p',
      '0',
      '--host',
      '127.0.0.1',
      '--engine-host',
      'localhost',
      '--engine-port',
      '4111',
      '--ws-port',
      '4112',
      '--bridge-port',
      '4113',
      '--no-otel',
      '--otel-service-name',
      'ops-console',
      '--enable-flow',
    ]);
    expect(await c.config()).toMatchObject({
      host: '127.0.0.1',
      engine_host: 'localhost',
      engine_port: 4111,
      ws_port: 4112,
      bridge_port: 4113,
      otel: { enabled: false, service_name: 'ops-console' },
      enable_flow: true,
      engine_urls: { http: 'http://localhost:4111', streams: 'ws://localhost:4112', bridge: 'ws://localhost:4113' },
    });
    expect(c.output()).toContain('serving http://127.0.0.1:');
  });

  it('uses the defaults of table 4.4 without flags', async () => {
    const c = await start(['--port', '0']);
    expect(await c.config()).toMatchObject({
      host: '127.0.0.1',
      engine_host: '127.0.0.1',
      engine_port: 3111,
      ws_port: 3112,
      bridge_port: 49134,
      otel: { enabled: true, service_name: 'eng-console', endpoint: 'http://127.0.0.1:3111/v1/traces' },
      enable_flow: false,
    });
  });

  it('reads OTEL_DISABLED, OTEL_SERVICE_NAME and ENG_ENABLE_FLOW, and flags win', async () => {
    const a = await start(['-p', '0'], { OTEL_DISABLED: '1', ENG_ENABLE_FLOW: 'true' });
    expect(await a.config()).toMatchObject({ otel: { enabled: false }, enable_flow: true });
    const b = await start(['-p', '0'], { OTEL_SERVICE_NAME: 'from-env' });
    expect((await b.config()).otel).toMatchObject({ enabled: true, service_name: 'from-env' });
    const c = await start(['-p', '0', '--otel-service-name', 'from-flag'], { OTEL_SERVICE_NAME: 'from-env' });
    expect((await c.config()).otel.service_name).toBe('from-flag');
  });

  it('exits 0 on SIGTERM and SIGINT, closing open /ws connections', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const engine = await startEngine();
      try {
        const c = await start(['-p', '0', '--no-otel', '--bridge-port', String(engine.busPort)]);
        const ws = new WebSocket(`${c.url.replace('http', 'ws')}/ws`);
        await new Promise((r, j) => {
          ws.once('open', r);
          ws.once('error', j);
        });
        const wsClosed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
        const done = exited(c.child);
        const t0 = Date.now();
        c.child.kill(signal);
        expect(await done).toEqual({ code: 0, signal: null });
        expect(Date.now() - t0).toBeLessThan(5000);
        expect(await wsClosed).toBe(1001);
        expect(c.output()).toContain(`${signal} received`);
      } finally {
        await engine.stop();
      }
    }
  });

  it('never logs URL credentials', async () => {
    const port = await deadPort();
    const c = await start(['-p', '0', '--no-otel', '--engine-host', 'admin:hunter2@127.0.0.1', '--bridge-port', String(port)]);
    // a browser hitting /ws makes the proxy log and close with the engine URL
    const ws = new WebSocket(`${c.url.replace('http', 'ws')}/ws`);
    const reason = await new Promise<string>((r) => ws.once('close', (_code, why) => r(why.toString())));
    expect(reason).toContain(`ws://127.0.0.1:${port}`);
    expect(reason).not.toContain('hunter2');
    const res = await fetch(`${c.url}/_console/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"function_id":"x"}',
    });
    expect(JSON.stringify(await res.json())).not.toContain('hunter2');
    c.child.kill('SIGTERM');
    await exited(c.child);
    expect(c.output()).not.toContain('hunter2');
    expect(c.output()).toContain('127.0.0.1');
  });
});

describe('eng-console OpenTelemetry', () => {
  it('sends its own traces to the engine under --otel-service-name', async () => {
    const engine = await startEngine({
      workersYaml:
        '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-observability\n    config:\n      logs_console_output: false\n',
    });
    const client = connect(engine.busUrl, { registerWorker: false });
    try {
      const c = await start([
        '-p',
        '0',
        '--engine-port',
        String(engine.ports.HTTP),
        '--bridge-port',
        String(engine.busPort),
        '--otel-service-name',
        'console-under-test',
      ]);
      await waitFor(async () => (await c.config()).engine_connected, 10_000);
      await fetch(`${c.url}/_console/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"function_id":"engine::workers::list","input":{}}',
      });
      const spans = await waitFor(async () => {
        const res = await client.call<{ spans: Array<{ service_name: string; name: string }> }>('engine::traces::list', {
          service_name: 'console-under-test',
          search_all_spans: true,
          include_internal: true,
        });
        return res.spans.length ? res.spans : undefined;
      }, 15_000);
      expect(spans[0]?.service_name).toBe('console-under-test');
    } finally {
      await client.close();
      await engine.stop();
    }
  });
});
