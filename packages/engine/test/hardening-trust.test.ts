/**
 * Issue 12 items 2, 6, 7 and 12: what one worker on the bus can do to others.
 *
 * - Ids of engine built-ins (any id a module serves, and the exact built-in ids of
 *   src/core/reserved-ids.ts, issue 26) cannot be registered by a worker: the registration is refused with a
 *   `registrationrejected` frame and a log line, and the built-in keeps answering.
 * - Two workers registering one id: the later serves it; when it leaves or unregisters, the
 *   earlier one (still connected, still registered) serves it again.
 * - A result is accepted only from the connection the call was sent to.
 * - `_caller_worker_id` is the real sender on every direct call (plain, void) and is never believed
 *   from data: queued messages and publishes (enqueue action, engine::queue::enqueue, publish,
 *   durable publish) reach a worker's function as sent, minus any `_caller_worker_id` (issue 26
 *   item 3), and a built-in they reach acts for the real sender, so no payload renames a worker.
 * - A call the engine cannot send to its worker answers the caller with an error and leaves the
 *   worker idle.
 */
import { type EngError, connect as engConnect } from '@eng/sdk';
import { registerWorker } from 'iii-sdk-0.22.1';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';

type Worker = RawClient & { workerId: string; token: string };

const MODULES_YAML = `  - name: eng-state
  - name: eng-pubsub
  - name: eng-queue
    config:
      adapter: { name: memory }
      default_queue_config: { max_retries: 0 }
`;

let engine: EngineProcess;
let observer: Worker;
const open: RawClient[] = [];

async function worker(name?: string): Promise<Worker> {
  const client = await RawClient.worker(engine.busUrl);
  open.push(client);
  if (name) client.registerWorker(name);
  return client;
}

/** A raw worker serving `id`: answers `{by: label, input}` and records what it was sent. */
async function server(id: string, label: string): Promise<Worker & { seen: RawFrame[] }> {
  const client = Object.assign(await worker(label), { seen: [] as RawFrame[] });
  client.socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as RawFrame;
    if (frame.type !== 'invokefunction' || frame.function_id !== id) return;
    client.seen.push(frame);
    client.send({
      type: 'invocationresult',
      invocation_id: frame.invocation_id,
      function_id: id,
      result: { by: label, input: frame.data },
    });
  });
  client.send({ type: 'registerfunction', id });
  return client;
}

async function workerRecord(id: string): Promise<any> {
  const { workers } = await observer.result('engine::workers::list', { worker_id: id });
  return workers.find((w: { id: string }) => w.id === id);
}

/** Calls `id` until the answer is `by` (registrations are frames: they land shortly after being sent). */
async function servedBy(caller: RawClient, id: string, by: string | null): Promise<void> {
  await waitFor(async () => {
    const frame = await caller.call(id, {});
    if (by === null) return (frame.error as { code?: string } | undefined)?.code === 'function_not_found';
    return (frame.result as { by?: string } | undefined)?.by === by;
  }, 10_000);
}

beforeAll(async () => {
  engine = await startEngine({ workersYaml: MODULES_YAML });
  observer = await worker('observer');
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await engine?.stop();
});

describe('ids of engine built-ins are reserved (item 2)', () => {
  it('refuses a worker registering state::set, engine::functions::list and reserved namespaces; the built-ins keep answering, also after it leaves', async () => {
    const intruder = await worker('intruder');
    const ids = ['state::set', 'engine::functions::list', 'engine::alerts::evaluate', 'eng::cron::trigger_now', 'iii::durable::publish'];
    for (const id of ids) intruder.send({ type: 'registerfunction', id });
    intruder.send({ type: 'registertriggertype', id: 'state', description: 'hijack' });

    for (const id of ids) {
      const rejected = await intruder.next((f) => f.type === 'registrationrejected' && f.function_id === id, 10_000);
      expect(rejected.code).toBe('RESERVED_ID');
      expect(rejected.message).toContain(`"${id}"`);
    }
    expect((await intruder.next((f) => f.type === 'registrationrejected' && f.trigger_type === 'state', 10_000)).message).toContain(
      'eng-state',
    );
    const extra = await intruder.next((f) => f.type === 'registrationrejected', 200).catch(() => null);
    expect(extra).toBeNull(); // one frame per refused registration, no more

    const builtinsAnswer = async () => {
      const set = await observer.call('state::set', { scope: 'trust', key: 'k', value: { v: 1 } });
      expect(set.error).toBeUndefined();
      expect(await observer.result('state::get', { scope: 'trust', key: 'k' })).toEqual({ v: 1 });
      const { functions } = await observer.result('engine::functions::list', { include_internal: true });
      const listed = new Map(functions.map((f: any) => [f.function_id, f]));
      expect(listed.get('state::set')).toMatchObject({ worker_id: null, worker_name: 'eng-state' });
      for (const id of ['engine::alerts::evaluate', 'eng::cron::trigger_now']) expect(listed.has(id)).toBe(false);
      expect(listed.get('iii::durable::publish')).toMatchObject({ worker_id: null });
      const { trigger_types } = await observer.result('engine::trigger-types::list', { include_internal: true });
      expect(trigger_types.find((t: any) => t.id === 'state')?.worker_name).toBe('eng-state');
    };
    await builtinsAnswer();
    expect(intruder.frames.filter((f) => f.type === 'invokefunction')).toEqual([]);
    expect(engine.logs()).toMatch(/registration of function state::set by worker intruder \([0-9a-f-]+\) refused/);

    await intruder.close();
    await waitFor(async () => !(await workerRecord(intruder.workerId)), 10_000);
    await builtinsAnswer();
  });

  it('tells an @eng/sdk worker why (an error event); an iii-sdk worker is refused without harm', async () => {
    const errors: EngError[] = [];
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const eng = engConnect(engine.busUrl, { name: 'eng-intruder', logger: quiet });
    eng.on('error', (e) => errors.push(e));
    eng.registerFunction('state::get', () => 'hijacked');
    const iii = registerWorker(engine.busUrl, { workerName: 'iii-intruder' });
    iii.registerFunction('engine::workers::list', async () => ({ workers: [] }));
    try {
      await waitFor(() => errors.length > 0, 10_000);
      expect(errors[0]?.code).toBe('RESERVED_ID');
      expect(errors[0]?.message).toMatch(/function state::get.*served by the engine module eng-state/);
      await waitFor(() => /registration of function engine::workers::list by worker .*refused/.test(engine.logs()), 10_000);
      expect((await observer.call('state::set', { scope: 'trust', key: 'sdk', value: 2 })).error).toBeUndefined();
      expect(await observer.result('state::get', { scope: 'trust', key: 'sdk' })).toBe(2);
      const { workers } = await observer.result('engine::workers::list', {});
      expect(workers.some((w: any) => w.name === 'observer')).toBe(true);
    } finally {
      await eng.close();
      await iii.shutdown();
    }
  });
});

describe('two workers registering one id (item 2)', () => {
  it('the later one serves it; when it leaves the earlier one serves it again, and a rejoin takes over again', async () => {
    const caller = await worker('dup-caller');
    const a = await server('dup::one', 'A');
    await servedBy(caller, 'dup::one', 'A');
    const b = await server('dup::one', 'B');
    await servedBy(caller, 'dup::one', 'B');
    const aCalls = a.seen.length;
    await caller.call('dup::one', {});
    expect(a.seen.length).toBe(aCalls); // A is not called while B serves

    await b.close();
    await servedBy(caller, 'dup::one', 'A');
    expect(a.seen.length).toBeGreaterThan(aCalls);

    const b2 = await server('dup::one', 'B2');
    await servedBy(caller, 'dup::one', 'B2');
    await a.close(); // the earlier one leaving changes nothing for the one serving
    expect((await caller.call('dup::one', {})).result).toMatchObject({ by: 'B2' });
    await b2.close();
    await servedBy(caller, 'dup::one', null); // nobody left: not restored from a gone worker
  });

  it('unregistering: the serving one hands back to the earlier; an earlier one that unregistered is not restored', async () => {
    const caller = await worker('dup-caller-2');
    const a = await server('dup::two', 'A');
    await servedBy(caller, 'dup::two', 'A');
    const b = await server('dup::two', 'B');
    await servedBy(caller, 'dup::two', 'B');
    b.send({ type: 'unregisterfunction', id: 'dup::two' });
    await servedBy(caller, 'dup::two', 'A');

    b.send({ type: 'registerfunction', id: 'dup::two' });
    await servedBy(caller, 'dup::two', 'B');
    a.send({ type: 'unregisterfunction', id: 'dup::two' }); // the hidden one withdraws
    await observer.result('engine::workers::list', {}); // frames of one socket are handled in order
    expect((await caller.call('dup::two', {})).result).toMatchObject({ by: 'B' });
    await b.close();
    await servedBy(caller, 'dup::two', null);
    expect(a.isOpen).toBe(true);
  });
});

describe('results are accepted only from the worker the call was sent to (item 6)', () => {
  it('drops a forged invocationresult from a third connection; the caller gets the real one', async () => {
    const executor = await worker('slow-executor');
    executor.send({ type: 'registerfunction', id: 'trust::slow' });
    const caller = await worker('victim-caller');
    const forger = await worker('forger');
    await waitFor(async () => (await observer.call('engine::functions::info', { function_id: 'trust::slow' })).result, 10_000);

    const invocationId = crypto.randomUUID();
    caller.send({ type: 'invokefunction', invocation_id: invocationId, function_id: 'trust::slow', data: { n: 1 } });
    const invoked = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'trust::slow', 10_000);
    expect(invoked.invocation_id).toBe(invocationId);

    forger.send({ type: 'invocationresult', invocation_id: invocationId, function_id: 'trust::slow', result: 'forged' });
    await waitFor(() => engine.logs().includes(`result for trust::slow from worker ${forger.workerId} dropped`), 10_000);
    expect(caller.frames.some((f) => f.type === 'invocationresult')).toBe(false);
    expect((await workerRecord(executor.workerId)).active_invocations).toBe(1);

    executor.send({ type: 'invocationresult', invocation_id: invocationId, function_id: 'trust::slow', result: 'real' });
    const result = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId, 10_000);
    expect(result.result).toBe('real');
    expect((await workerRecord(executor.workerId)).active_invocations).toBe(0);
  });
});

describe('_caller_worker_id is always the real sender (item 7)', () => {
  let victim: Worker;
  let attacker: Worker;
  let spy: Worker & { seen: RawFrame[] };

  beforeAll(async () => {
    victim = await worker('victim');
    attacker = await worker('attacker');
    spy = await server('trust::spy', 'spy');
    await waitFor(async () => (await workerRecord(victim.workerId))?.name === 'victim', 10_000);
    await waitFor(async () => (await observer.call('engine::functions::info', { function_id: 'trust::spy' })).result, 10_000);
  });

  const spoofed = (name: string) => ({ _caller_worker_id: victim.workerId, name, pid: 1 });

  async function expectVictimUntouched(): Promise<void> {
    const record = await workerRecord(victim.workerId);
    expect(record.name).toBe('victim');
    expect(record.pid).toBe(process.pid);
  }

  /** The spy's next call whose data carries `marker`. */
  const spied = (marker: string) =>
    waitFor(() => spy.seen.find((f) => (f.data as { marker?: string } | null)?.marker === marker), 10_000).then(
      (f) => f.data as Record<string, unknown>,
    );

  it('enqueue and void actions: engine::workers::register renames only the real sender; a worker is never told a forged sender', async () => {
    attacker.send({
      type: 'invokefunction',
      invocation_id: crypto.randomUUID(),
      function_id: 'engine::workers::register',
      data: spoofed('PWNED-enqueue'),
      action: { type: 'enqueue', queue: 'default' },
    });
    await waitFor(async () => (await workerRecord(attacker.workerId))?.name === 'PWNED-enqueue', 10_000);
    await expectVictimUntouched();

    attacker.send({
      type: 'invokefunction',
      invocation_id: crypto.randomUUID(),
      function_id: 'trust::spy',
      data: { _caller_worker_id: victim.workerId, marker: 'enqueue' },
      action: { type: 'enqueue', queue: 'default' },
    });
    // a queued message reaches a worker as it was sent (issue 26 item 3), less the forged key
    expect(await spied('enqueue')).toEqual({ marker: 'enqueue' });

    // the void action, like a plain call, always carried the real sender: still so
    attacker.send({
      type: 'invokefunction',
      function_id: 'engine::workers::register',
      data: spoofed('PWNED-void'),
      action: { type: 'void' },
    });
    attacker.send({
      type: 'invokefunction',
      function_id: 'trust::spy',
      data: { ...spoofed('x'), marker: 'void' },
      action: { type: 'void' },
    });
    expect((await spied('void'))._caller_worker_id).toBe(attacker.workerId);
    await waitFor(async () => (await workerRecord(attacker.workerId))?.name === 'PWNED-void', 10_000);
    await expectVictimUntouched();
  });

  it('engine::queue::enqueue called directly: the built-in acts for the real sender too', async () => {
    const receipt = await attacker.call('engine::queue::enqueue', {
      queue: 'default',
      function_id: 'engine::workers::register',
      data: spoofed('PWNED-direct-enqueue'),
    });
    expect(receipt.error).toBeUndefined();
    await waitFor(async () => (await workerRecord(attacker.workerId))?.name === 'PWNED-direct-enqueue', 10_000);
    await expectVictimUntouched();
  });

  it('publish: a subscriber bound to engine::workers::register cannot be pointed at another worker', async () => {
    attacker.send({
      type: 'registertrigger',
      id: crypto.randomUUID(),
      trigger_type: 'subscribe',
      function_id: 'engine::workers::register',
      config: { topic: 'trust-evil' },
    });
    attacker.send({
      type: 'registertrigger',
      id: crypto.randomUUID(),
      trigger_type: 'subscribe',
      function_id: 'trust::spy',
      config: { topic: 'trust-evil' },
    });
    await waitFor(async () => {
      const { registered_triggers } = await observer.result('engine::registered-triggers::list', {
        trigger_type: 'subscribe',
        include_internal: true,
      });
      return registered_triggers.filter((t: any) => t.config?.topic === 'trust-evil').length === 2;
    }, 10_000);
    const published = await attacker.call('publish', { topic: 'trust-evil', data: { ...spoofed('PWNED-publish'), marker: 'publish' } });
    expect(published.error).toBeUndefined();
    expect(await spied('publish')).not.toHaveProperty('_caller_worker_id');
    await waitFor(async () => (await workerRecord(attacker.workerId))?.name === 'PWNED-publish', 10_000);
    await expectVictimUntouched();
  });

  it('durable publish (eng::durable::publish and iii::durable::publish): the built-in acts for the real sender', async () => {
    attacker.send({
      type: 'registertrigger',
      id: crypto.randomUUID(),
      trigger_type: 'durable:subscriber',
      function_id: 'engine::workers::register',
      config: { topic: 'trust-durable' },
    });
    attacker.send({
      type: 'registertrigger',
      id: crypto.randomUUID(),
      trigger_type: 'durable:subscriber',
      function_id: 'trust::spy',
      config: { topic: 'trust-durable' },
    });
    await waitFor(async () => {
      const { registered_triggers } = await observer.result('engine::registered-triggers::list', {
        trigger_type: 'durable:subscriber',
        include_internal: true,
      });
      return registered_triggers.filter((t: any) => t.config?.topic === 'trust-durable' && t.status === 'active').length === 2;
    }, 10_000);
    for (const [fn, name] of [
      ['eng::durable::publish', 'PWNED-durable'],
      ['iii::durable::publish', 'PWNED-iii-durable'],
    ] as const) {
      const published = await attacker.call(fn, { topic: 'trust-durable', data: { ...spoofed(name), marker: name } });
      expect(published.error).toBeUndefined();
      expect(await spied(name)).not.toHaveProperty('_caller_worker_id');
      await waitFor(async () => (await workerRecord(attacker.workerId))?.name === name, 10_000);
      await expectVictimUntouched();
    }
  });
});

describe('_caller_worker_id where there is no sender (item 7)', () => {
  let redis: RedisProcess;
  let shared: EngineProcess;
  let publisher: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    shared = await startEngine({
      workersYaml: `  - name: eng-pubsub\n    config:\n      adapter:\n        name: redis\n        config:\n          redis_url: ${redis.url}\n`,
    });
    publisher = new Redis(redis.url);
  }, 30_000);

  afterAll(async () => {
    publisher?.disconnect();
    await shared?.stop();
    await redis?.stop();
  });

  it('an event that reaches subscribers without a sender has any _caller_worker_id removed', async () => {
    const victim = await RawClient.worker(shared.busUrl);
    open.push(victim);
    victim.registerWorker('shared-victim');
    const seen: Array<Record<string, unknown>> = [];
    victim.socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as RawFrame;
      if (frame.type !== 'invokefunction' || frame.function_id !== 'trust::listen') return;
      seen.push(frame.data as Record<string, unknown>);
      victim.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: 'trust::listen', result: null });
    });
    victim.send({ type: 'registerfunction', id: 'trust::listen' });
    for (const fn of ['engine::workers::register', 'trust::listen']) {
      victim.send({
        type: 'registertrigger',
        id: crypto.randomUUID(),
        trigger_type: 'subscribe',
        function_id: fn,
        config: { topic: 'nobody' },
      });
    }
    await waitFor(async () => {
      const { registered_triggers } = await victim.result('engine::registered-triggers::list', {
        trigger_type: 'subscribe',
        include_internal: true,
      });
      return registered_triggers.length === 2;
    }, 10_000);
    const name = async () => {
      const { workers } = await victim.result('engine::workers::list', { worker_id: victim.workerId });
      return workers[0]?.name;
    };
    await waitFor(async () => (await name()) === 'shared-victim', 10_000);

    // what another engine on this redis (or anyone who can write to it) sends: no publishing worker
    const event = {
      topic: 'nobody',
      data: { _caller_worker_id: victim.workerId, name: 'PWNED-redis', pid: 1, marker: 'redis' },
      caller: victim.workerId,
    };
    await waitFor(async () => {
      await publisher.publish('eng:pubsub', JSON.stringify({ origin: 'elsewhere', event }));
      return seen.length > 0;
    }, 10_000);
    expect(seen[0]).toEqual({ name: 'PWNED-redis', pid: 1, marker: 'redis' });
    await waitFor(() => /subscriber engine::workers::register of topic "nobody" failed: deserialization_error/.test(shared.logs()), 10_000);
    expect(await name()).toBe('shared-victim');
  });
});

describe('a call the engine cannot send to its worker (item 12)', () => {
  it('answers the caller with an error and leaves the worker idle', async () => {
    const executor = await worker('phantom-executor');
    executor.send({ type: 'registerfunction', id: 'trust::echo' });
    const caller = await worker('phantom-caller');
    await waitFor(async () => (await observer.call('engine::functions::info', { function_id: 'trust::echo' })).result, 10_000);

    // parses fine, but nested too deep to be written out again
    const depth = 100_000;
    const invocationId = crypto.randomUUID();
    caller.send(
      `{"type":"invokefunction","invocation_id":"${invocationId}","function_id":"trust::echo","data":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
    );
    const answer = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId, 10_000);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: expect.any(String), message: expect.stringMatching(/trust::echo|deep|nest/i) });

    const record = await workerRecord(executor.workerId);
    expect(record.active_invocations).toBe(0);
    expect(record.status).toBe('connected');
    expect(executor.frames.some((f) => f.type === 'invokefunction')).toBe(false);

    // the worker still serves ordinary calls, and is idle again afterwards
    const next = crypto.randomUUID();
    caller.send({ type: 'invokefunction', invocation_id: next, function_id: 'trust::echo', data: { ok: true } });
    const invoked = await executor.next((f) => f.type === 'invokefunction' && f.invocation_id === next, 10_000);
    executor.send({ type: 'invocationresult', invocation_id: invoked.invocation_id, function_id: 'trust::echo', result: 'fine' });
    expect((await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === next, 10_000)).result).toBe('fine');
    expect((await workerRecord(executor.workerId)).active_invocations).toBe(0);
  });
});
