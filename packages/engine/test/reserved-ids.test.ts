/**
 * Issue 26 item 1: the engine reserves the exact ids of its built-ins, not the whole `engine::`
 * namespace. A worker cannot register an id any eng module serves (loaded or not) or one iii's
 * engine serves; it can register any other id, iii's console's `engine::console::*` included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import {
  ENG_BUILTIN_FUNCTION_IDS,
  III_BUILTIN_FUNCTION_IDS,
  isReservedFunctionId,
  isReservedTriggerTypeId,
  RESERVED_TRIGGER_TYPE_IDS,
} from '../src/core/reserved-ids.ts';

const RESERVED_SPACES = /^(engine::|eng::|iii::)/;

const ALL_MODULES = `  - name: eng-http
    config: { port: {{HTTP_PORT}} }
  - name: eng-stream
    config: { port: {{STREAMS_PORT}} }
  - name: eng-state
  - name: eng-queue
    config: { adapter: { name: memory } }
  - name: eng-pubsub
  - name: eng-cron
  - name: eng-observability
  - name: eng-configuration
  - name: eng-engine-functions
  - name: eng-http-functions
`;

const open: RawClient[] = [];
const engines: EngineProcess[] = [];

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await Promise.all(engines.map((e) => e.stop()));
});

describe('the list of reserved ids is complete', () => {
  it('names every engine::/eng::/iii:: function and engine:: trigger type a module registers', async () => {
    const engine = await startEngine({ workersYaml: ALL_MODULES });
    engines.push(engine);
    const client = await RawClient.worker(engine.busUrl);
    open.push(client);
    const { functions } = await client.result('engine::functions::list', { include_internal: true });
    const builtins = functions
      .filter((f: { worker_id: string | null }) => f.worker_id === null)
      .map((f: { function_id: string }) => f.function_id);
    expect(builtins.length).toBeGreaterThan(40);
    const missing = builtins.filter((id: string) => RESERVED_SPACES.test(id) && !isReservedFunctionId(id));
    expect(missing).toEqual([]);
    const { trigger_types } = await client.result('engine::trigger-types::list', { include_internal: true });
    const missingTypes = trigger_types
      .map((t: { id: string }) => t.id)
      .filter((id: string) => id.startsWith('engine::') && !isReservedTriggerTypeId(id));
    expect(missingTypes).toEqual([]);
  }, 60_000);
});

describe('a worker on an engine without those modules', () => {
  let engine: EngineProcess;
  beforeAll(async () => {
    // only the bus: eng-queue, eng-cron, eng-observability and eng-engine-functions are not loaded
    engine = await startEngine();
    engines.push(engine);
  }, 30_000);

  it('is refused every built-in id with a clear error, each one frame', async () => {
    const intruder = await RawClient.worker(engine.busUrl);
    open.push(intruder);
    intruder.registerWorker('intruder');
    const ids = [...ENG_BUILTIN_FUNCTION_IDS, ...III_BUILTIN_FUNCTION_IDS];
    for (const id of ids) intruder.send({ type: 'registerfunction', id });
    for (const id of ids) {
      const rejected = await intruder.next((f) => f.type === 'registrationrejected' && f.function_id === id, 10_000);
      expect(rejected.code, id).toBe('RESERVED_ID');
      expect(rejected.message).toMatch(new RegExp(`"${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" is (reserved|served by the engine)`));
    }
    for (const id of RESERVED_TRIGGER_TYPE_IDS) {
      intruder.send({ type: 'registertriggertype', id, description: 'hijack' });
      const rejected = await intruder.next((f) => f.type === 'registrationrejected' && f.trigger_type === id, 10_000);
      expect(rejected.code).toBe('RESERVED_ID');
      expect(rejected.message).toContain(`trigger type "${id}" is`);
    }
    // nobody can call the claimed ids on the intruder
    const caller = await RawClient.worker(engine.busUrl);
    open.push(caller);
    const frame = await caller.call('engine::queue::enqueue', { topic: 't', data: {} });
    expect((frame.error as { code?: string }).code).toBe('function_not_found');
    expect(intruder.frames.filter((f) => f.type === 'invokefunction')).toEqual([]);
  }, 60_000);

  it("accepts iii's console's engine::console::* ids and other engine:: ids; callers reach them", async () => {
    const consoleWorker = await RawClient.worker(engine.busUrl);
    open.push(consoleWorker);
    consoleWorker.registerWorker('iii-console');
    const ids = ['engine::console::functions', 'engine::console::foo', 'engine::something'];
    consoleWorker.socket.on('message', (data) => {
      const f = JSON.parse(data.toString());
      if (f.type !== 'invokefunction') return;
      consoleWorker.send({
        type: 'invocationresult',
        invocation_id: f.invocation_id,
        function_id: f.function_id,
        result: { served: f.function_id },
      });
    });
    for (const id of ids) consoleWorker.send({ type: 'registerfunction', id });
    consoleWorker.send({ type: 'registertriggertype', id: 'engine::console::events', description: 'console events' });
    const caller = await RawClient.worker(engine.busUrl);
    open.push(caller);
    for (const id of ids) {
      let answer: unknown;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const frame = await caller.call(id, {});
        answer = frame.result;
        if (answer) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(answer, id).toEqual({ served: id });
    }
    const refused = await consoleWorker.next((f) => f.type === 'registrationrejected', 500).catch(() => null);
    expect(refused).toBeNull();
  }, 60_000);
});
