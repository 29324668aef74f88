import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, hostname, platform, release } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, NODE_TS, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { client, closeClients, recordingWebSocket } from './helpers.ts';

// spec: engine-protocol §4.2 — on every open the SDK calls `engine::workers::register` (action void)
// with runtime, version, name, pid and os; the engine lists the worker with those fields (§4.1).

interface ListedWorker {
  id: string;
  name: string;
  description: string | null;
  runtime: string | null;
  version: string | null;
  os: string | null;
  pid: number | null;
  status: string;
  ip_address: string | null;
}

const OS = `${platform()} ${release()} (${arch()})`;
const SDK_PACKAGE_VERSION = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/sdk/package.json'), 'utf8')).version as string;

let engine: EngineProcess;
const children = new Set<ChildProcess>();
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(async () => {
  await closeClients();
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});
afterAll(async () => {
  await engine?.stop();
});

async function listed(workerId: string | undefined): Promise<ListedWorker> {
  const observer = client(engine.busUrl, { registerWorker: false });
  return waitFor(async () => {
    const { workers } = await observer.call<{ workers: ListedWorker[] }>('engine::workers::list', {});
    return workers.find((w) => w.id === workerId && w.pid !== null);
  });
}

/** A worker process using the SDK defaults; resolves with its pid and the worker id it got. */
async function workerProcess(env: Record<string, string | undefined>): Promise<{ pid: number; workerId: string }> {
  const child = spawn(process.execPath, [...NODE_TS, join(REPO_ROOT, 'packages/sdk/test/fixtures/registering-worker.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_URL: engine.busUrl, ENG_WORKER_NAME: undefined, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const workerId = await waitFor(() => /^ready (\S+)$/m.exec(output)?.[1], 20_000).catch((err: Error) => {
    throw new Error(`${err.message}; worker output:\n${output}`);
  });
  return { pid: child.pid as number, workerId };
}

describe('engine::workers::register on open', () => {
  it('sends runtime, version, name, description, os and pid as a void call, and the engine lists exactly those', async () => {
    const sent: string[] = [];
    const worker = client(engine.busUrl, {
      name: 'info-worker',
      description: 'reports itself',
      WebSocket: recordingWebSocket(sent),
    });
    await worker.ready({ timeoutMs: 5000 });

    const frame = await waitFor(() =>
      sent.map((s) => JSON.parse(s)).find((f) => f.type === 'invokefunction' && f.function_id === 'engine::workers::register'),
    );
    expect(frame.action).toEqual({ type: 'void' });
    expect(frame.data).toEqual({
      runtime: 'node',
      version: SDK_PACKAGE_VERSION,
      name: 'info-worker',
      description: 'reports itself',
      os: OS,
      pid: process.pid,
    });

    expect(await listed(worker.workerId)).toMatchObject({
      id: worker.workerId,
      name: 'info-worker',
      description: 'reports itself',
      runtime: 'node',
      version: SDK_PACKAGE_VERSION,
      os: OS,
      pid: process.pid,
      status: 'connected',
      ip_address: '127.0.0.1',
    });
  });

  it('names a worker <hostname>:<pid> by default, with the pid and os of its own process', async () => {
    const { pid, workerId } = await workerProcess({});
    expect(pid).not.toBe(process.pid);
    expect(await listed(workerId)).toMatchObject({
      name: `${hostname()}:${pid}`,
      runtime: 'node',
      version: SDK_PACKAGE_VERSION,
      os: OS,
      pid,
    });
  });

  it('takes the default name from ENG_WORKER_NAME', async () => {
    const { pid, workerId } = await workerProcess({ ENG_WORKER_NAME: 'named-by-env' });
    expect(await listed(workerId)).toMatchObject({ name: 'named-by-env', pid, os: OS });
  });

  it('strips control and bidi characters from name and description and cuts them to 280 characters', async () => {
    const worker = client(engine.busUrl, { name: `bad\u0007\u202ename\n${'n'.repeat(400)}`, description: `d\u0000${'x'.repeat(400)}` });
    await worker.ready({ timeoutMs: 5000 });
    const record = await listed(worker.workerId);
    expect(record.name).toBe(`badname${'n'.repeat(400)}`.slice(0, 280));
    expect(record.description).toBe(`d${'x'.repeat(400)}`.slice(0, 280));
  });

  it('is not listed when registerWorker is false (the engine hides bus workers without a pid)', async () => {
    const sent: string[] = [];
    const hidden = client(engine.busUrl, { registerWorker: false, WebSocket: recordingWebSocket(sent) });
    await hidden.ready({ timeoutMs: 5000 });
    const { workers } = await hidden.call<{ workers: ListedWorker[] }>('engine::workers::list', {});
    expect(workers.find((w) => w.id === hidden.workerId)).toBeUndefined();
    expect(sent.some((s) => s.includes('engine::workers::register'))).toBe(false);
  });

  it('registers again after reconnecting to a restarted engine, with the same fields', async () => {
    const worker = client(engine.busUrl, { name: 'info-reconnects', reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    await worker.ready({ timeoutMs: 5000 });
    const before = await listed(worker.workerId);
    await engine.restart();
    // the id is unset while disconnected: wait for the one the restarted engine assigned
    await waitFor(() => worker.workerId !== undefined && worker.workerId !== before.id, 15_000);
    const after = await listed(worker.workerId);
    expect(after.id).not.toBe(before.id);
    const reported = (w: ListedWorker) => ({
      name: w.name,
      description: w.description,
      runtime: w.runtime,
      version: w.version,
      os: w.os,
      pid: w.pid,
    });
    expect(reported(after)).toEqual(reported(before));
    expect(after).toMatchObject({ name: 'info-reconnects', runtime: 'node', os: OS, pid: process.pid, version: SDK_PACKAGE_VERSION });
  }, 40_000);
});
