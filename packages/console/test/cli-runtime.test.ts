import type { ChildProcess } from 'node:child_process';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENG_CLI, type EngineProcess, NODE_TS, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { CONSOLE_BIN as BIN, makeBundle, type StartedConsole, spawnConsole } from './helpers.ts';

// seed table 4.4 at run time, beyond what the flags parse to: `--no-otel` / `OTEL_DISABLED` really
// stop the console's own spans, `--host` really moves the listening socket, and `eng console`
// (engine CLI) really serves the UI.

const bundle = makeBundle();
const running: ChildProcess[] = [];

type Started = StartedConsole;

/** Start eng-console (or `eng console` when `viaEngineCli`) and wait for its ready line. */
function start(args: string[], env: Record<string, string> = {}, viaEngineCli = false): Promise<Started> {
  const argv = viaEngineCli ? [...NODE_TS, ENG_CLI, 'console', ...args] : [BIN, ...args];
  return spawnConsole({ argv, webDir: bundle, running, env, cwd: REPO_ROOT });
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => r({ code, signal }));
  });

/** What a fetch to `url` gives: the HTTP status, or the connection error code. */
async function reach(url: string): Promise<number | string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    await res.arrayBuffer();
    return res.status;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return cause?.code ?? (err as Error).name;
  }
}

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('eng-console OpenTelemetry switched off', () => {
  let engine: EngineProcess;
  let client: EngClient;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml:
        '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-observability\n    config:\n      logs_console_output: false\n',
      env: { ENG_LOG_LEVEL: 'warn' },
    });
    client = connect(engine.busUrl, { name: 'otel-checks', registerWorker: false, tracing: false });
    await client.ready({ timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await client?.close();
    await engine?.stop();
  });

  /** Distinct service names of every stored span (internal ones included). */
  const services = async (): Promise<Set<string>> => {
    const res = await client.call<{ spans: Array<{ service_name?: string }> }>('engine::traces::list', {
      search_all_spans: true,
      include_internal: true,
      limit: 10_000,
    });
    return new Set(res.spans.map((s) => s.service_name ?? ''));
  };

  it('--no-otel and OTEL_DISABLED send no span while an enabled twin, fed the same requests, does', async () => {
    const enginePorts = ['--engine-port', String(engine.ports.HTTP), '--bridge-port', String(engine.busPort)];
    // the control: same engine, same requests, OpenTelemetry on
    const on = await start(['-p', '0', ...enginePorts, '--otel-service-name', 'otel-on']);
    const flagOff = await start(['-p', '0', ...enginePorts, '--no-otel', '--otel-service-name', 'otel-flag-off']);
    const envOff = await start(['-p', '0', ...enginePorts], { OTEL_DISABLED: '1', OTEL_SERVICE_NAME: 'otel-env-off' });
    for (const c of [on, flagOff, envOff]) {
      await waitFor(async () => (await (await fetch(`${c.url}/_console/config`)).json()).engine_connected, 10_000);
    }
    const traffic = async (c: Started) => {
      for (let i = 0; i < 3; i++) {
        const ok = await fetch(`${c.url}/_console/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"function_id":"engine::workers::list","input":{}}',
        });
        expect(ok.status).toBe(200);
        // a failing call too: error spans are exported the same way
        const missing = await fetch(`${c.url}/_console/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"function_id":"no::such::function","input":{}}',
        });
        expect(missing.status).toBe(404);
        expect((await fetch(`${c.url}/_console/config`)).status).toBe(200);
        expect((await fetch(`${c.url}/`)).status).toBe(200);
      }
    };
    await Promise.all([traffic(on), traffic(flagOff), traffic(envOff)]);

    // the batch processor flushes every second: wait for the control's spans, then one flush more
    await waitFor(async () => (await services()).has('otel-on'), 30_000, 200);
    await new Promise((r) => setTimeout(r, 2500));
    // a shutdown flushes what is buffered: stop all three before looking
    for (const c of [on, flagOff, envOff]) {
      c.child.kill('SIGTERM');
      expect((await exited(c.child)).code).toBe(0);
    }
    await new Promise((r) => setTimeout(r, 500));
    // the control's spans are the console's own (its invoke and its routes); its last flush may
    // still be on its way into the engine on a loaded machine
    const spanNames = async () => {
      const own = await client.call<{ spans: Array<{ name: string }> }>('engine::traces::list', {
        service_name: 'otel-on',
        search_all_spans: true,
        include_internal: true,
        limit: 1000,
      });
      return new Set(own.spans.map((s) => s.name));
    };
    await waitFor(async () => {
      const names = await spanNames();
      return names.has('invoke engine::workers::list') && names.has('GET /_console/config');
    }, 30_000);
    const seen = await services();
    expect(seen.has('otel-on')).toBe(true);
    expect(seen.has('otel-flag-off')).toBe(false);
    expect(seen.has('otel-env-off')).toBe(false);
    // nor under the default name, in case the switch dropped the name but kept the exporter
    expect(seen.has('eng-console')).toBe(false);

    const names = await spanNames();
    expect(names).toContain('invoke engine::workers::list');
    expect(names).toContain('GET /_console/config');
  }, 90_000);
});

describe('eng-console --host', () => {
  it('binds 127.0.0.2: it answers there and not on 127.0.0.1', async () => {
    const c = await start(['-p', '0', '--host', '127.0.0.2', '--no-otel']);
    expect(c.url).toBe(`http://127.0.0.2:${c.port}`);
    expect(c.output()).toContain(`serving http://127.0.0.2:${c.port}`);
    expect(await reach(`http://127.0.0.2:${c.port}/`)).toBe(200);
    expect(await reach(`http://127.0.0.2:${c.port}/_console/config`)).toBe(200);
    expect(await reach(`http://127.0.0.1:${c.port}/`)).toBe('ECONNREFUSED');
    const config = await (await fetch(`http://127.0.0.2:${c.port}/_console/config`)).json();
    expect(config.host).toBe('127.0.0.2');
  });

  it('binds ::1: it answers on [::1] and not on 127.0.0.1', async () => {
    const c = await start(['-p', '0', '--host', '::1', '--no-otel']);
    expect(c.url).toBe(`http://[::1]:${c.port}`);
    expect(await reach(`http://[::1]:${c.port}/`)).toBe(200);
    expect(await reach(`http://127.0.0.1:${c.port}/`)).toBe('ECONNREFUSED');
  });
});

describe('eng console (engine CLI)', () => {
  it('starts the console, serves / and stops on SIGTERM', async () => {
    const c = await start(['-p', '0', '--no-otel'], {}, true);
    const res = await fetch(`${c.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toContain('no-cache');
    const html = await res.text();
    expect(html).toContain('<div id="root"></div>');
    // the hashed asset it references is served too
    const asset = await fetch(`${c.url}/assets/index-AbC123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(c.output()).toContain('eng-console v0.1.0 serving');
    c.child.kill('SIGTERM');
    expect(await exited(c.child)).toEqual({ code: 0, signal: null });
  });
});
