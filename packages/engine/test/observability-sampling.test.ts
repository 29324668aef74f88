import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient } from '../../../test/raw-client.ts';
import { autoExecutor, frame, hex, logsRequest, otelSocket, rawClients, sendFrames } from './observability-helpers.ts';

// spec: engine-protocol §7.2 (`sampling_ratio`, `sampling {default, parent_based, rules,
// rate_limit}`, `logs_sampling_ratio`), §4.3 `engine::sampling::rules`, §2.6 (an unsampled
// context is propagated with flags 00 and nothing under it is recorded).

const raw = rawClients();
afterAll(() => raw.closeAll());

const STATE = '  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n';
const observability = (lines: string[]) =>
  `${STATE}  - name: eng-observability\n    config:\n      logs_console_output: false\n${lines.map((l) => `      ${l}\n`).join('')}`;

const flagsOf = (traceparent: unknown) => String(traceparent).split('-')[3];
const traceIdOf = (traceparent: unknown) => String(traceparent).split('-')[1] as string;

async function bindState(owner: RawClient, caller: RawClient, id: string, functionId: string, scope: string): Promise<void> {
  owner.send({ type: 'registertrigger', id, trigger_type: 'state', function_id: functionId, config: { scope } });
  await waitFor(async () => {
    const list = await caller.result<{ registered_triggers: Array<{ id: string; status?: string }> }>(
      'engine::registered-triggers::list',
      {},
    );
    return list.registered_triggers.some((t) => t.id === id && t.status === 'active');
  });
}

/** Finished spans stored for a trace. */
async function spansOf(client: RawClient, traceId: string): Promise<Array<{ name: string; pending?: boolean }>> {
  return (await client.result<{ spans: Array<{ name: string; pending?: boolean }> }>('engine::traces::spans', { trace_id: traceId })).spans;
}

describe('sampling_ratio 0.5 and logs_sampling_ratio 0.5', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: observability(['sampling_ratio: 0.5', 'logs_sampling_ratio: 0.5']) });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('samples about half of 300 root calls; exactly the flagged-01 traces are stored', async () => {
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::half');
    const N = 300;
    for (let i = 0; i < N; i += 50) await Promise.all(Array.from({ length: 50 }, () => client.call('samp::half', {})));
    expect(invokes).toHaveLength(N);
    const sampled = new Set(invokes.filter((f) => flagsOf(f.traceparent) === '01').map((f) => traceIdOf(f.traceparent)));
    const dropped = new Set(invokes.filter((f) => flagsOf(f.traceparent) === '00').map((f) => traceIdOf(f.traceparent)));
    expect(sampled.size + dropped.size).toBe(N);
    // binomial(300, 0.5): sd 8.7, so [105, 195] is ±5 sd
    expect(sampled.size).toBeGreaterThanOrEqual(105);
    expect(sampled.size).toBeLessThanOrEqual(195);
    const stored = await waitFor(async () => {
      const list = await client.result<{ spans: Array<{ trace_id: string }>; total: number }>('engine::traces::list', {
        name: 'call samp::half',
        limit: 1000,
      });
      return list.total === sampled.size ? new Set(list.spans.map((s) => s.trace_id)) : null;
    });
    expect(stored).toEqual(sampled);
  });

  it('a sampled-out trace is dropped whole: call → state::set → state_triggers → trigger call, all or nothing', async () => {
    await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::on_set');
    const owner = await raw.open(engine.busUrl);
    owner.send({ type: 'registerfunction', id: 'samp::on_set_owner' });
    await bindState(owner, client, 'samp-set', 'samp::on_set', 'samp-chain');
    // the chain function writes state under the context it was given, like an SDK worker would
    let n = 0;
    const { invokes } = await autoExecutor(
      () => raw.open(engine.busUrl),
      client,
      'samp::chain',
      async (invoke, worker) => {
        const set = await worker.call('state::set', { scope: 'samp-chain', key: `k${n++}`, value: 1 }, { traceparent: invoke.traceparent });
        expect(set.error).toBeUndefined();
      },
    );
    const N = 60;
    await Promise.all(Array.from({ length: N }, () => client.call('samp::chain', {})));
    const kept = invokes.filter((f) => flagsOf(f.traceparent) === '01').map((f) => traceIdOf(f.traceparent));
    const lost = invokes.filter((f) => flagsOf(f.traceparent) === '00').map((f) => traceIdOf(f.traceparent));
    expect(kept.length + lost.length).toBe(N);
    expect(kept.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    const expected = ['call samp::chain', 'call samp::on_set', 'call state::set', 'state_triggers'];
    for (const traceId of kept) {
      const spans = await waitFor(async () => {
        const s = await spansOf(client, traceId);
        return s.length === 4 && s.every((x) => !x.pending) ? s : null;
      });
      expect(spans.map((s) => s.name).sort()).toEqual(expected);
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const traceId of lost) expect(await spansOf(client, traceId)).toEqual([]);
    // nothing of a dropped trace leaked as a trace of its own either
    const triggers = await client.result<{ spans: Array<{ trace_id: string }> }>('engine::traces::list', {
      name: 'state_triggers',
      search_all_spans: true,
      limit: 1000,
    });
    expect(new Set(triggers.spans.map((s) => s.trace_id))).toEqual(new Set(kept));
  });

  it('keeps about half of 400 worker log records; engine::log::* records are not sampled', async () => {
    const tag = hex(6);
    const now = Date.now();
    const otel = await otelSocket(engine.busUrl);
    const records = Array.from({ length: 400 }, (_, i) => ({ timeMs: now + i, severity: 9, body: `${tag} worker ${i}`, service: 'w' }));
    await sendFrames(otel, [frame('LOGS', logsRequest(records))]);
    // one frame is ingested in one go: once any of its records is listed, all that were kept are
    const kept = await waitFor(
      async () => (await client.result<{ total: number }>('engine::logs::list', { search: `${tag} worker` })).total,
    );
    // binomial(400, 0.5): sd 10, so [150, 250] is ±5 sd
    expect(kept).toBeGreaterThanOrEqual(150);
    expect(kept).toBeLessThanOrEqual(250);
    for (let i = 0; i < 20; i++) await client.result('engine::log::info', { message: `${tag} engine ${i}` });
    expect((await client.result<{ total: number }>('engine::logs::list', { search: `${tag} engine` })).total).toBe(20);
    otel.terminate();
    const rules = await client.result<{ traces: { default_ratio: number }; logs: { sampling_ratio: number } }>(
      'engine::sampling::rules',
      {},
    );
    expect(rules.traces.default_ratio).toBe(0.5);
    expect(rules.logs).toEqual({ sampling_ratio: 0.5 });
  });
});

describe('sampling rules', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: observability([
        'sampling:',
        '  default: 1',
        '  rules:',
        '    - { operation: "call samp::never*", rate: 0 }',
        '    - { service: "not-eng", rate: 0 }',
        '    - { service: "e*", operation: "state_triggers", rate: 0 }',
      ]),
    });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('an operation rule drops matching root spans; a rule for another service does not apply', async () => {
    const never = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::never_this');
    const other = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::other');
    await client.call('samp::never_this', {});
    await client.call('samp::other', {});
    expect(flagsOf(never.invokes[0]?.traceparent)).toBe('00');
    expect(flagsOf(other.invokes[0]?.traceparent)).toBe('01');
    const otherTrace = traceIdOf(other.invokes[0]?.traceparent);
    await waitFor(async () => (await spansOf(client, otherTrace)).length === 1);
    expect(await spansOf(client, traceIdOf(never.invokes[0]?.traceparent))).toEqual([]);
    const rules = await client.result<{ traces: { parent_based: boolean; rules: unknown[]; default_ratio: number } }>(
      'engine::sampling::rules',
      {},
    );
    expect(rules.traces).toMatchObject({ parent_based: true, default_ratio: 1 });
    expect(rules.traces.rules).toEqual([
      { operation: 'call samp::never*', rate: 0 },
      { service: 'not-eng', rate: 0 },
      { service: 'e*', operation: 'state_triggers', rate: 0 },
    ]);
  });

  it('a service + operation rule on state_triggers drops the trigger span and the call beneath it', async () => {
    const handler = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::rule_on_set');
    await bindState(handler.worker, client, 'rule-set', 'samp::rule_on_set', 'rule-scope');
    await client.result('state::set', { scope: 'rule-scope', key: 'a', value: 1 });
    await waitFor(() => handler.invokes.length === 1);
    expect(flagsOf(handler.invokes[0]?.traceparent)).toBe('00');
    await new Promise((r) => setTimeout(r, 200));
    expect(await spansOf(client, traceIdOf(handler.invokes[0]?.traceparent))).toEqual([]);
  });
});

describe('parent_based: false', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: observability(['sampling:', '  parent_based: false', '  rules: [{ operation: "call state::list_groups", rate: 0 }]']),
    });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('rules and the ratio also decide under a sampled parent; an unsampled parent is still followed', async () => {
    const sampledParent = `00-${hex(16)}-${hex(8)}-01`;
    expect((await client.call('state::list_groups', {}, { traceparent: sampledParent })).error).toBeUndefined();
    expect((await client.call('state::get', { scope: 'x', key: 'y' }, { traceparent: sampledParent })).error).toBeUndefined();
    const spans = await waitFor(async () => {
      const s = await spansOf(client, traceIdOf(sampledParent));
      return s.length > 0 ? s : null;
    });
    await new Promise((r) => setTimeout(r, 200));
    // the rule (rate 0) dropped state::list_groups under a sampled parent; state::get (rate 1) is kept
    expect((await spansOf(client, traceIdOf(sampledParent))).map((s) => s.name)).toEqual(['call state::get']);
    expect(spans.map((s) => s.name)).toEqual(['call state::get']);
    const unsampledParent = `00-${hex(16)}-${hex(8)}-00`;
    expect((await client.call('state::get', { scope: 'x', key: 'y' }, { traceparent: unsampledParent })).error).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(await spansOf(client, traceIdOf(unsampledParent))).toEqual([]);
    const rules = await client.result<{ traces: { parent_based: boolean } }>('engine::sampling::rules', {});
    expect(rules.traces.parent_based).toBe(false);
  });
});

describe('parent_based: true (the default) with default 0', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: observability(['sampling: { default: 0 }']) });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('follows the incoming flags: 01 is recorded although the root ratio is 0, 00 is not; roots are not', async () => {
    const sampledParent = `00-${hex(16)}-${hex(8)}-01`;
    const unsampledParent = `00-${hex(16)}-${hex(8)}-00`;
    await client.call('state::get', { scope: 'x', key: 'y' }, { traceparent: sampledParent });
    await client.call('state::get', { scope: 'x', key: 'y' }, { traceparent: unsampledParent });
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::root');
    await client.call('samp::root', {});
    await waitFor(async () => (await spansOf(client, traceIdOf(sampledParent))).length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(await spansOf(client, traceIdOf(unsampledParent))).toEqual([]);
    expect(flagsOf(invokes[0]?.traceparent)).toBe('00');
    expect(await spansOf(client, traceIdOf(invokes[0]?.traceparent))).toEqual([]);
  });
});

describe('sampling.rate_limit', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: observability(['sampling: { rate_limit: { max_traces_per_second: 5 } }']) });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('records at most max_traces_per_second new traces per second; every call is still served', async () => {
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'samp::limited');
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 40 }, () => client.call('samp::limited', {})));
    const seconds = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
    expect(results.every((r) => r.error === undefined)).toBe(true);
    const recorded = invokes.filter((f) => flagsOf(f.traceparent) === '01').length;
    expect(recorded).toBeGreaterThanOrEqual(5);
    expect(recorded).toBeLessThanOrEqual(5 * seconds);
    expect(recorded).toBeLessThan(40);
  });
});
