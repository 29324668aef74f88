import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { EngError } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, NODE_TS, REPO_ROOT, startEngine } from '../../../test/harness.ts';
import { client, closeClients, functionListed } from './helpers.ts';

// spec: engine-protocol §2.8 — when the executing worker dies, its callers get invocation_stopped

let engine: EngineProcess;
const children = new Set<ChildProcess>();
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  await closeClients();
});
afterAll(async () => {
  await engine?.stop();
});

/** Spawn the hanging worker; resolves with the process and a way to wait for a line on its stdout. */
function spawnWorker(): { child: ChildProcess; line(prefix: string): Promise<string> } {
  const child = spawn(process.execPath, [...NODE_TS, join(REPO_ROOT, 'packages/sdk/test/fixtures/hanging-worker.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_URL: engine.busUrl },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const waiters: Array<{ prefix: string; resolve(line: string): void }> = [];
  const scan = () => {
    for (const waiter of [...waiters]) {
      const found = output.split('\n').find((l) => l.startsWith(waiter.prefix));
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    scan();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    line: (prefix) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${prefix}" line from the worker; output:\n${output}`)), 15_000);
        waiters.push({
          prefix,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        scan();
      }),
  };
}

describe('a worker that dies mid-call', () => {
  it('makes the pending call reject with invocation_stopped, and its functions disappear', async () => {
    const worker = spawnWorker();
    await worker.line('ready ');
    const caller = client(engine.busUrl);
    await caller.ready();
    await functionListed(caller, 'hang::forever');

    const call = caller.call('hang::forever', { n: 1 }, { timeoutMs: 20_000 }).catch((e: unknown) => e);
    await worker.line('invoked');
    const started = Date.now();
    worker.child.kill('SIGKILL');

    const error = (await call) as EngError;
    expect(error).toBeInstanceOf(EngError);
    expect(error.code).toBe('invocation_stopped');
    expect(error.message).toBe('Invocation stopped');
    expect(Date.now() - started).toBeLessThan(5000);
    await functionListed(caller, 'hang::forever', false);
  });
});
