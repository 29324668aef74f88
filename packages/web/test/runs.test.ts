import type { StoredSpan } from '@eng/protocol';
import { describe, expect, it } from 'vitest';
import { parsePayload, rerunText, runsFromSpans } from '../src/lib/runs.ts';

// issue 19 §13: a function's runs read back from the trace store

const T0 = 1_000_000; // ms; small enough that nanoseconds stay exact in a double
let seq = 0;
function span(partial: Partial<StoredSpan> & { attrs?: Record<string, string> }): StoredSpan {
  const { attrs, ...rest } = partial;
  seq++;
  return {
    trace_id: `t${seq}`,
    span_id: `s${seq}`,
    parent_span_id: null,
    name: 'span',
    kind: 'server',
    start_time_unix_nano: T0 * 1e6,
    end_time_unix_nano: (T0 + 10) * 1e6,
    status: 'ok',
    attributes: Object.entries(attrs ?? {}),
    service_name: 'eng',
    events: [],
    links: [],
    ...rest,
  };
}
const input = (json: string) => ({
  name: 'eng.invocation.input',
  timestamp_unix_nano: T0 * 1e6,
  attributes: [['eng.payload', json]] as [string, string][],
});
const output = (json: string) => ({
  name: 'eng.invocation.output',
  timestamp_unix_nano: T0 * 1e6,
  attributes: [['eng.payload', json]] as [string, string][],
});

describe('runsFromSpans', () => {
  it('joins the engine call span and the worker execute span of one call, with its input and output', () => {
    const call = span({
      name: 'call fulfilment::ship',
      kind: 'consumer',
      attrs: {
        function_id: 'fulfilment::ship',
        'messaging.destination.name': 'fulfilment',
        'eng.queue.attempt': '2',
        'eng.worker.name': 'orders',
      },
    });
    const exec = span({
      trace_id: call.trace_id,
      parent_span_id: call.span_id,
      name: 'execute fulfilment::ship',
      kind: 'internal',
      service_name: 'orders',
      start_time_unix_nano: (T0 + 1) * 1e6,
      end_time_unix_nano: (T0 + 9) * 1e6,
      attrs: { function_id: 'fulfilment::ship' },
      events: [input('{"id":"ord_1","_caller_worker_id":"w1"}'), output('{"shipped":true}')],
    });
    const runs = runsFromSpans([exec, call], 'fulfilment::ship');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      traceId: call.trace_id,
      spanId: call.span_id,
      status: 'ok',
      durationMs: 10,
      via: 'queue fulfilment (attempt 2)',
      worker: 'orders',
      // the engine's reserved field is not sent back by a rerun
      input: { value: { id: 'ord_1' }, truncated: false },
      output: { value: { shipped: true } },
    });
  });

  it('reads a failure, a pending run and iii-sdk payloads; newest first', () => {
    const failed = span({
      name: 'execute orders::create',
      status: 'error',
      status_description: 'invocation_failed: out of stock',
      start_time_unix_nano: (T0 + 100) * 1e6,
      end_time_unix_nano: (T0 + 130) * 1e6,
      attrs: { function_id: 'orders::create' },
      events: [
        { name: 'exception', timestamp_unix_nano: 0, attributes: [['exception.message', 'out of stock']] },
        {
          name: 'iii.invocation.input',
          timestamp_unix_nano: 0,
          attributes: [
            ['iii.payload.json', '{"sku":"A"}'],
            ['iii.payload.truncated', 'false'],
          ],
        },
      ],
    });
    const pending = span({
      name: 'call orders::create',
      start_time_unix_nano: (T0 + 200) * 1e6,
      end_time_unix_nano: 0,
      pending: true,
      attrs: { function_id: 'orders::create', 'eng.trigger.type': 'cron' },
    });
    const runs = runsFromSpans([failed, pending], 'orders::create');
    expect(runs.map((r) => r.status)).toEqual(['pending', 'error']);
    expect(runs[0]?.via).toBe('cron');
    expect(runs[1]).toMatchObject({ error: 'out of stock', input: { value: { sku: 'A' } }, via: 'call' });
  });

  it('names an HTTP request that ran the function', () => {
    const request = span({
      name: 'POST /orders',
      attrs: { function_id: 'orders::create', 'http.request.method': 'POST', 'http.route': '/orders' },
    });
    const exec = span({ trace_id: request.trace_id, parent_span_id: request.span_id, attrs: { function_id: 'orders::create' } });
    expect(runsFromSpans([request, exec], 'orders::create').map((r) => r.via)).toEqual(['HTTP POST /orders']);
  });

  it('leaves out spans that only name the function (the enqueue action) and other functions', () => {
    const enqueue = span({ name: 'enqueue_action', kind: 'producer', attrs: { function_id: 'fulfilment::reserve_stock' } });
    const other = span({ name: 'execute orders::get', attrs: { function_id: 'orders::get' } });
    const run = span({ name: 'execute fulfilment::reserve_stock', attrs: { function_id: 'fulfilment::reserve_stock' } });
    expect(runsFromSpans([enqueue, other, run], 'fulfilment::reserve_stock').map((r) => r.spanId)).toEqual([run.span_id]);
  });

  it('marks a cut payload, which a rerun starts from as text to complete', () => {
    const cut = parsePayload('{"items":[1,2,3…');
    expect(cut.truncated).toBe(true);
    expect(cut.value).toBeUndefined();
    expect(rerunText(cut)).toBe('{"items":[1,2,3…');
    expect(parsePayload('{"a":1}', true).truncated).toBe(true);
    expect(rerunText(parsePayload('{"a":1}'))).toBe('{\n  "a": 1\n}');
    expect(rerunText(undefined)).toBe('{}');
  });
});
