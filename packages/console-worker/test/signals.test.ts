import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { ensureBundle, startWorker } from './helpers.ts';

// issue 7 §5: graceful shutdown on SIGINT and SIGTERM with connections open, bounded in time,
// and no URL password in any log line.

beforeAll(() => ensureBundle(), 180_000);

/** A keep-alive HTTP connection that stays open after its request. */
async function keepAliveRequest(base: string): Promise<Agent> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await new Promise<void>((resolve, reject) => {
    request(`${base}/`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    })
      .on('error', reject)
      .end();
  });
  return agent;
}

describe('graceful shutdown', () => {
  let engine: EngineProcess;
  let probe: RawClient;
  beforeAll(async () => {
    engine = await startEngine();
    probe = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await probe?.terminate();
    await engine?.stop();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: closes proxied sockets with 1001, leaves the engine and exits 0 within the bound`, async () => {
      const worker = await startWorker(['--http-port', '0', '--url', `ws://admin:secret-${signal}@127.0.0.1:${engine.busPort}`]);
      const consoleListed = async () => {
        const { workers } = await probe.result('engine::workers::list', {});
        return workers.some((w: { pid?: number; name?: string }) => w.pid === worker.ready.pid && w.name === 'console');
      };
      await waitFor(consoleListed, 10_000);
      const browser = new WebSocket(`${worker.base.replace('http', 'ws')}/ws`);
      await new Promise((r) => browser.once('open', r));
      const browserClosed = new Promise<{ code: number; reason: string }>((r) =>
        browser.once('close', (code, reason) => r({ code, reason: reason.toString() })),
      );
      const agent = await keepAliveRequest(worker.base);
      expect(Object.keys(agent.freeSockets).length).toBe(1);

      const exit = await worker.stop(signal, 15_000);
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.ms).toBeLessThan(6000);
      expect(await browserClosed).toEqual({ code: 1001, reason: 'console worker shutting down' });
      expect(worker.logs()).toContain(`${signal} received: shutting down`);
      expect(worker.logs()).toMatch(/console: stopped/);
      expect(worker.logs()).not.toContain(`secret-${signal}`);
      await waitFor(async () => !(await consoleListed()), 5000);
      agent.destroy();
      // the port is free again
      const again = await startWorker(['--http-port', String(worker.ready.http_port), '--url', engine.busUrl]);
      await again.stop();
    });
  }
});

describe('log redaction', () => {
  it('never logs the password of the engine URL, even at debug level with the engine unreachable', async () => {
    const port = await freePort();
    const worker = await startWorker(['--http-port', '0', '--url', `ws://user:secret@127.0.0.1:${port}`], {
      env: { ENG_LOG_LEVEL: 'debug' },
    });
    // the proxy's dial failure and the worker's own reconnect attempts both log the URL
    const ws = new WebSocket(`${worker.base.replace('http', 'ws')}/ws`);
    await new Promise((r) => ws.once('close', r));
    await waitFor(() => /not reachable yet/.test(worker.logs()), 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    const exit = await worker.stop('SIGTERM');
    expect(exit.code).toBe(0);
    const logs = worker.logs();
    expect(logs).toContain(`ws://127.0.0.1:${port}`);
    expect(logs).not.toContain('secret');
    expect(logs).not.toContain('user:');
  });
});
