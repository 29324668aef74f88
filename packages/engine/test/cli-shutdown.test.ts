import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EngineTriggerType } from '@eng/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

/**
 * Issue 25 item 14: Ctrl-C printed one "call to router::on-worker-change not sent" warning per
 * worker that left. On a stop the launched workers leave first, while the modules still run; each
 * departure fires engine::workers-available, and a subscriber that is itself closing cannot take
 * the call. That is expected while stopping: one summary line, not a warning per call.
 */
describe('eng start: a quiet, ordered stop', () => {
  const LEAVERS = 5;
  let engine: EngineProcess;
  let subscriber: RawClient;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-shutdown-'));
    const ws = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('ws')), 'wrapper.mjs')).href;
    // a worker that connects to the bus and leaves cleanly on SIGTERM
    const leaver = join(dir, 'leaver.mjs');
    writeFileSync(
      leaver,
      [
        `import WebSocket from ${JSON.stringify(ws)};`,
        'const socket = new WebSocket(process.env.ENG_URL);',
        // listed as a worker, as the SDKs register themselves
        "socket.on('open', () => socket.send(JSON.stringify({ type: 'invokefunction', function_id: 'engine::workers::register', data: { runtime: 'node', name: process.env.ENG_WORKER_NAME, pid: process.pid }, action: { type: 'void' } })));",
        "process.on('SIGTERM', () => { socket.close(); socket.once('close', () => process.exit(0)); });",
      ].join('\n'),
    );
    const workers = Array.from({ length: LEAVERS }, (_, i) =>
      [`  - name: leaver-${i}`, `    command: ${process.execPath}`, `    args: ["${leaver}"]`].join('\n'),
    );
    engine = await startEngine({ workersYaml: workers.join('\n') });

    // the subscriber (the chat router in the report): told of every worker that comes or goes
    subscriber = await RawClient.worker(engine.busUrl);
    subscriber.send({ type: 'registerfunction', id: 'watch::workers_changed' });
    subscriber.send({
      type: 'registertrigger',
      id: 'watch-workers',
      trigger_type: EngineTriggerType.WorkersAvailable,
      function_id: 'watch::workers_changed',
      config: {},
    });
    // the leavers are on the bus
    await waitFor(async () => {
      const { workers: listed } = await subscriber.result('engine::workers::list', {});
      return (listed as Array<{ runtime: string }>).filter((w) => w.runtime === 'node').length >= LEAVERS;
    }, 15_000);
  });
  afterAll(async () => {
    await subscriber?.terminate();
    await engine?.kill();
  });

  it('stops the launched workers while the bus still runs and prints no warning per call it could not send', async () => {
    // the subscriber starts to close and stops reading: the engine's side of its socket stays
    // "closing", so every call to it while the leavers go cannot be sent (the race of a real stop)
    subscriber.socket.close();
    (subscriber.socket as WebSocket & { _socket: { pause(): void } })._socket.pause();
    const code = await engine.stop();
    expect(code).toBe(0);
    const logs = engine.logs();
    expect(logs).toMatch(/SIGTERM received: stopping/);
    expect(logs).not.toMatch(/call to watch::workers_changed not sent/);
    // one line sums them up
    expect(logs).toMatch(/stopped; \d+ calls? to workers that were leaving (was|were) not sent/);
    expect(logs.match(/not sent/g)).toHaveLength(1);
  });
});
