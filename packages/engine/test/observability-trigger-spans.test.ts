import type { StoredSpan, TraceTreeNode } from '@eng/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient, RawFrame } from '../../../test/raw-client.ts';
import { hex, rawClients } from './observability-helpers.ts';

// spec: engine-protocol §8.1 — the engine spans named `cron_trigger`, `state_triggers` and
// `enqueue_action`, each the parent of the function call it causes, in one trace.

const raw = rawClients();
let engine: EngineProcess;
let client: RawClient & { workerId: string };

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: [
      '  - name: iii-cron',
      '  - name: eng-state',
      '    config:',
      '      adapter: { name: kv, config: { store_method: in_memory } }',
      '  - name: eng-queue',
      '    config:',
      '      adapter: { name: memory }',
      '  - name: eng-observability',
      '    config:',
      '      logs_console_output: false',
      '',
    ].join('\n'),
  });
  client = await raw.open(engine.busUrl);
});
afterAll(async () => {
  await raw.closeAll();
  await engine?.stop();
});

const attrs = (span: StoredSpan) => Object.fromEntries(span.attributes);
const traceIdOf = (frame: RawFrame) => String(frame.traceparent).split('-')[1] as string;
const spanIdOf = (frame: RawFrame) => String(frame.traceparent).split('-')[2] as string;

/** The tree of `traceId` once it holds `count` finished spans. */
async function finishedTree(traceId: string, count: number): Promise<TraceTreeNode[]> {
  return waitFor(async () => {
    const tree = await client.result<{ roots: TraceTreeNode[] }>('engine::traces::tree', { trace_id: traceId });
    const all: TraceTreeNode[] = [];
    const walk = (nodes: TraceTreeNode[]) => {
      for (const node of nodes) {
        all.push(node);
        walk(node.children);
      }
    };
    walk(tree.roots);
    return all.length === count && all.every((s) => !s.pending) ? tree.roots : null;
  });
}

/** A raw worker owning `functionId`, registered once the engine lists it. */
async function executor(functionId: string): Promise<RawClient> {
  const worker = await raw.open(engine.busUrl);
  worker.send({ type: 'registerfunction', id: functionId });
  await waitFor(async () => (await client.call('engine::functions::info', { function_id: functionId })).result);
  return worker;
}

async function bind(worker: RawClient, id: string, triggerType: string, functionId: string, config: unknown): Promise<void> {
  worker.send({ type: 'registertrigger', id, trigger_type: triggerType, function_id: functionId, config });
  // a successful bind is not acknowledged (§2.3.7): wait until the engine lists it active
  await waitFor(async () => {
    const list = await client.result<{ registered_triggers: Array<{ id: string; status?: string }> }>(
      'engine::registered-triggers::list',
      {},
    );
    return list.registered_triggers.some((t) => t.id === id && t.status === 'active');
  });
}

const answer = (worker: RawClient, invoke: RawFrame, outcome: { result?: unknown; error?: unknown }) =>
  worker.send({ type: 'invocationresult', invocation_id: invoke.invocation_id, function_id: invoke.function_id, ...outcome });

describe('cron_trigger', () => {
  it('a firing is a trace rooted at cron_trigger (job id, expression, scheduled time) with the call beneath it', async () => {
    const worker = await executor('spans::cron_tick');
    await bind(worker, 'cron-spans', 'cron', 'spans::cron_tick', { expression: '* * * * * *' });
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::cron_tick', 5000);
    answer(worker, invoke, { result: null });
    worker.send({ type: 'unregistertrigger', id: 'cron-spans', trigger_type: 'cron' });
    const payload = invoke.data as { job_id: string; scheduled_time: string; actual_time: string };

    const [root, ...others] = await finishedTree(traceIdOf(invoke), 2);
    expect(others).toEqual([]);
    expect(root).toMatchObject({ name: 'cron_trigger', parent_span_id: null, service_name: 'eng', status: 'ok', kind: 'internal' });
    expect(attrs(root as StoredSpan)).toMatchObject({
      // the root names the function it fired, as an HTTP trigger's server span does (issue 25 item 15)
      function_id: 'spans::cron_tick',
      'eng.trigger.type': 'cron',
      'eng.trigger.id': 'cron-spans',
      'eng.cron.job_id': payload.job_id,
      'eng.cron.expression': '* * * * * *',
      'eng.cron.scheduled_time': payload.scheduled_time,
      'eng.cron.actual_time': payload.actual_time,
      'eng.cron.manual': 'false',
      'eng.trigger.function_id': 'spans::cron_tick',
    });
    const [call] = root?.children ?? [];
    expect(call).toMatchObject({ name: 'call spans::cron_tick', parent_span_id: root?.span_id, status: 'ok', children: [] });
    // the executor received the call span's context
    expect(call?.span_id).toBe(spanIdOf(invoke));
    expect(attrs(call as StoredSpan)).toMatchObject({
      function_id: 'spans::cron_tick',
      'eng.trigger.type': 'cron',
      'eng.trigger.id': 'cron-spans',
      'eng.function.kind': 'user',
    });
    // listed as one root trace of two spans
    const list = await client.result<{ spans: Array<{ name: string; span_count: number }> }>('engine::traces::list', {
      trace_id: traceIdOf(invoke),
    });
    expect(list.spans.map((s) => [s.name, s.span_count])).toEqual([['cron_trigger', 2]]);
    // a search of root spans by function finds the firing (the console's "traces of this function")
    const byFunction = await client.result<{ spans: Array<{ trace_id: string; name: string }> }>('engine::traces::list', {
      attributes: [['function_id', 'spans::cron_tick']],
    });
    expect(byFunction.spans.map((s) => [s.trace_id, s.name])).toContainEqual([traceIdOf(invoke), 'cron_trigger']);
  });

  it('a failed handler marks both spans Error; trigger_now is tagged manual', async () => {
    const worker = await executor('spans::cron_fail');
    await bind(worker, 'cron-fail', 'cron', 'spans::cron_fail', { expression: '0 0 0 1 1 * 2099' });
    expect(await client.result('eng::cron::trigger_now', { trigger_id: 'cron-fail' })).toMatchObject({ manual: true });
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::cron_fail');
    answer(worker, invoke, { error: { code: 'boom', message: 'cron handler failed' } });
    const [root] = await finishedTree(traceIdOf(invoke), 2);
    expect(root).toMatchObject({ name: 'cron_trigger', status: 'error', status_description: 'boom: cron handler failed' });
    expect(attrs(root as StoredSpan)['eng.cron.manual']).toBe('true');
    expect(root?.events.map((e) => e.name)).toEqual(['exception']);
    expect(root?.children.map((c) => [c.name, c.status])).toEqual([['call spans::cron_fail', 'error']]);
  });
});

describe('state_triggers', () => {
  it('state::set without a context: state_triggers is the root (scope, key, event type), the call beneath it', async () => {
    const worker = await executor('spans::on_state');
    await bind(worker, 'state-spans', 'state', 'spans::on_state', { scope: 'span-scope', key: 'k1' });
    await client.result('state::set', { scope: 'span-scope', key: 'k1', value: { n: 1 } });
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::on_state');
    answer(worker, invoke, { result: null });

    const [root, ...others] = await finishedTree(traceIdOf(invoke), 2);
    expect(others).toEqual([]);
    expect(root).toMatchObject({ name: 'state_triggers', parent_span_id: null, status: 'ok', service_name: 'eng' });
    expect(attrs(root as StoredSpan)).toMatchObject({
      'eng.trigger.type': 'state',
      'eng.state.scope': 'span-scope',
      'eng.state.key': 'k1',
      'eng.state.event_type': 'state:created',
      'eng.trigger.count': '1',
      'eng.trigger.ids': 'state-spans',
    });
    const [call] = root?.children ?? [];
    expect(call).toMatchObject({ name: 'call spans::on_state', parent_span_id: root?.span_id, span_id: spanIdOf(invoke) });
    expect(attrs(call as StoredSpan)).toMatchObject({ 'eng.trigger.type': 'state', 'eng.trigger.id': 'state-spans' });
  });

  it('state::set under a caller context: call state::set → state_triggers → call handler, in the caller trace', async () => {
    const worker = await executor('spans::on_update');
    await bind(worker, 'state-update-spans', 'state', 'spans::on_update', { scope: 'span-scope', key: 'k2' });
    await client.result('state::set', { scope: 'span-scope', key: 'k2', value: 1 });
    const first = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::on_update');
    answer(worker, first, { result: null });

    const traceId = hex(16);
    const callerSpan = hex(8);
    const set = await client.call(
      'state::set',
      { scope: 'span-scope', key: 'k2', value: 2 },
      { traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(set.error).toBeUndefined();
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::on_update');
    expect(traceIdOf(invoke)).toBe(traceId);
    answer(worker, invoke, { error: { code: 'nope', message: 'handler refused' } });

    const [root] = await finishedTree(traceId, 3);
    expect(root).toMatchObject({ name: 'call state::set', parent_span_id: callerSpan, status: 'ok' });
    const [triggers] = root?.children ?? [];
    expect(triggers).toMatchObject({ name: 'state_triggers', status: 'error', status_description: 'nope: handler refused' });
    expect(attrs(triggers as StoredSpan)).toMatchObject({
      'eng.state.event_type': 'state:updated',
      'eng.state.key': 'k2',
      'eng.trigger.failed': '1',
    });
    expect(triggers?.children.map((c) => [c.name, c.status, c.span_id])).toEqual([['call spans::on_update', 'error', spanIdOf(invoke)]]);
  });

  it('a write that matches no binding makes no state_triggers span', async () => {
    await client.result('state::set', { scope: 'unwatched-scope', key: 'x', value: 1 });
    await new Promise((r) => setTimeout(r, 200));
    const list = await client.result<{ spans: Array<{ attributes: Array<[string, string]> }> }>('engine::traces::list', {
      name: 'state_triggers',
      search_all_spans: true,
      attributes: [['eng.state.scope', 'unwatched-scope']],
    });
    expect(list.spans).toEqual([]);
  });
});

describe('enqueue_action', () => {
  it('an enqueue is an enqueue_action producer span (queue, receipt id) with the delivery call beneath it', async () => {
    const worker = await executor('spans::queued');
    const enqueued = await client.call('spans::queued', { job: 1 }, { action: { type: 'enqueue', queue: 'span-jobs' } });
    const receipt = (enqueued.result as { messageReceiptId: string }).messageReceiptId;
    expect(receipt).toEqual(expect.any(String));
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::queued');
    answer(worker, invoke, { result: 'done' });

    const [root, ...others] = await finishedTree(traceIdOf(invoke), 2);
    expect(others).toEqual([]);
    expect(root).toMatchObject({ name: 'enqueue_action', kind: 'producer', parent_span_id: null, status: 'ok' });
    expect(attrs(root as StoredSpan)).toMatchObject({
      'messaging.system': 'eng-queue',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'span-jobs',
      'messaging.message.id': receipt,
      'eng.queue.name': 'span-jobs',
      'eng.queue.receipt_id': receipt,
      function_id: 'spans::queued',
      'eng.function.kind': 'user',
      'eng.caller.worker_id': client.workerId,
    });
    const [delivery] = root?.children ?? [];
    expect(delivery).toMatchObject({ name: 'call spans::queued', kind: 'consumer', span_id: spanIdOf(invoke), status: 'ok' });
    expect(attrs(delivery as StoredSpan)).toMatchObject({ 'eng.message.id': receipt, 'messaging.destination.name': 'span-jobs' });
    // the trace is listed (not hidden as internal) and group-by-message finds it
    const list = await client.result<{ spans: Array<{ name: string }> }>('engine::traces::list', { trace_id: traceIdOf(invoke) });
    expect(list.spans.map((s) => s.name)).toEqual(['enqueue_action']);
    const groups = await client.result<{ groups: Array<{ value: string; trace_ids: string[] }> }>('engine::traces::group_by', {
      attribute: 'eng.message.id',
    });
    expect(groups.groups.find((g) => g.value === receipt)?.trace_ids).toEqual([traceIdOf(invoke)]);
  });

  it('under a caller context the enqueue_action span is its child', async () => {
    const worker = await executor('spans::queued_ctx');
    const traceId = hex(16);
    const callerSpan = hex(8);
    const enqueued = await client.call(
      'spans::queued_ctx',
      {},
      { action: { type: 'enqueue', queue: 'span-jobs' }, traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(enqueued.error).toBeUndefined();
    const invoke = await worker.next((f) => f.type === 'invokefunction' && f.function_id === 'spans::queued_ctx');
    expect(traceIdOf(invoke)).toBe(traceId);
    answer(worker, invoke, { result: null });
    const [root] = await finishedTree(traceId, 2);
    expect(root).toMatchObject({ name: 'enqueue_action', parent_span_id: callerSpan });
    expect(root?.children.map((c) => c.name)).toEqual(['call spans::queued_ctx']);
  });
});
