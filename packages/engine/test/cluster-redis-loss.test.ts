/**
 * Two engines (eng-cluster) lose their Redis and get it back (issue 27 item 3, README "Running
 * several engines", failure table): while Redis is away a call in flight to the other engine ends
 * at once with invocation_stopped, the other engine's functions leave the list and calls to them
 * fail naming the function, local calls go on; when Redis is back on its address both rejoin by
 * themselves and calls cross again. An engine refuses to join with a live engine's id or an unreachable Redis.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type EngClient } from '@eng/sdk';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';

type IiiWorker = ReturnType<typeof registerWorker>;

let port: number;
let redis: ChildProcess | undefined;
let one: EngineProcess;
let two: EngineProcess;
let worker: IiiWorker;
let caller: EngClient;
let holding = 0;

/** redis-server on a fixed port, so that a second one takes the first one's place. */
async function runRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return child;
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGKILL');
  await exited;
}

const yaml = (id: string) =>
  `  - name: eng-cluster\n    config:\n      redis_url: redis://127.0.0.1:${port}\n      engine_id: ${id}\n      heartbeat_ms: 200\n      ttl_ms: 1000\n      check_ms: 100\n`;

const listed = async (id: string) =>
  (await caller.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {})).functions.some(
    (f) => f.function_id === id,
  );

beforeAll(async () => {
  port = await freePort();
  redis = await runRedis();
  [one, two] = await Promise.all([startEngine({ workersYaml: yaml('r1') }), startEngine({ workersYaml: yaml('r2') })]);
  worker = registerWorker(two.busUrl, { workerName: 'held-r2', otel: { enabled: false }, enableMetricsReporting: false } as never);
  worker.registerFunction('far::hold', () => {
    holding++;
    return new Promise(() => {});
  });
  worker.registerFunction('far::echo', async (input: unknown) => ({ echoed: input }));
  caller = connect(one.busUrl, { name: 'caller-r1' });
  caller.registerFunction('near::echo', (input) => ({ near: input }));
  await caller.ready();
  await waitFor(() => listed('far::echo'), 10_000);
}, 60_000);

afterAll(async () => {
  await worker?.shutdown();
  await caller?.close();
  await one?.stop();
  await two?.stop();
  await stopRedis();
});

describe('the engines lose their Redis', () => {
  it('a call in flight to the other engine ends at once; its functions leave the list; local calls go on; all comes back with Redis', async () => {
    await expect(caller.call('far::echo', { n: 1 })).resolves.toMatchObject({ echoed: { n: 1 } });
    const inFlight = caller.call('far::hold', {}, { timeoutMs: 20_000 }).catch((e: unknown) => e);
    await waitFor(() => holding > 0, 5000);
    const lostAt = Date.now();
    await stopRedis();
    expect(await inFlight).toMatchObject({ code: 'invocation_stopped' });
    expect(Date.now() - lostAt).toBeLessThan(2000);

    await waitFor(async () => !(await listed('far::echo')), 5000);
    const gone = await caller.call('far::echo', {}).catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'function_not_found' });
    expect(String((gone as Error).message)).toContain('far::echo');
    await expect(caller.call('near::echo', 1)).resolves.toEqual({ near: 1 });

    redis = await runRedis();
    await waitFor(() => listed('far::echo'), 15_000);
    await expect(caller.call('far::echo', { n: 2 })).resolves.toMatchObject({ echoed: { n: 2 } });
  }, 40_000);
});

describe('joining', () => {
  it('an engine whose engine_id a live engine holds, or whose Redis does not answer, refuses to start and says why', async () => {
    await waitFor(() => listed('far::echo'), 15_000);
    await expect(startEngine({ workersYaml: yaml('r2'), readyTimeoutMs: 15_000 })).rejects.toThrow(/engine_id r2 is already used/);
    await expect(
      startEngine({
        workersYaml: '  - name: eng-cluster\n    config:\n      redis_url: redis://127.0.0.1:1\n',
        readyTimeoutMs: 15_000,
      }),
    ).rejects.toThrow(/eng-cluster could not reach redis at redis:\/\/127\.0\.0\.1:1/);
  }, 40_000);
});
