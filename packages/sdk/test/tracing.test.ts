import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { connect, type EngClient, EngError, newTraceparent, parseTraceparent } from '../src/index.ts';

let engine: EngineProcess;
const clients: EngClient[] = [];
function client(name: string): EngClient {
  const c = connect(engine.busUrl, { name, tracing: { serviceName: name } });
  clients.push(c);
  return c;
}

/**
 * ready() says the engine accepted the connection; a registration sent on another socket may still
 * be on its way. Wait until the engine lists every function before calling them.
 */
async function registered(caller: EngClient, ...ids: string[]): Promise<void> {
  await caller.ready();
  for (const id of ids) {
    await waitFor(() =>
      caller.call('engine::functions::info', { function_id: id }).then(
        () => true,
        () => false,
      ),
    );
  }
}

beforeAll(async () => {
  engine = await startEngine();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await engine.stop();
});

interface SpanNode {
  name: string;
  span_id: string;
  parent_span_id: string | null;
  service_name: string;
  status: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  attributes: Array<[string, string]>;
  events: Array<{ name: string; attributes: Array<[string, string]> }>;
  children: SpanNode[];
}

describe('@eng/sdk tracing', () => {
  it('opens an execute span per handler run and links calls across workers into one trace', async () => {
    const outer = client('trace-outer');
    const inner = client('trace-inner');
    const caller = client('trace-caller');
    inner.registerFunction('trace::inner', async (input: { n: number }) => ({ doubled: input.n * 2 }));
    outer.registerFunction('trace::outer', async (input: { n: number }) => {
      const result = await outer.call<{ doubled: number }>('trace::inner', { n: input.n });
      return { result: result.doubled + 1 };
    });
    await registered(caller, 'trace::inner', 'trace::outer');
    const root = newTraceparent();
    const traceId = parseTraceparent(root)!.traceId;
    expect(await caller.trigger({ function_id: 'trace::outer', payload: { n: 20 }, traceparent: root })).toEqual({ result: 41 });

    const tree = await waitFor(async () => {
      const t = await caller.call<{ roots: SpanNode[] }>('engine::traces::tree', { trace_id: traceId });
      const top = t.roots.find((r) => r.name === 'execute trace::outer');
      return top?.children.some((c) => c.name === 'execute trace::inner') ? top : undefined;
    }, 5000);
    expect(tree.parent_span_id).toBe(parseTraceparent(root)!.spanId);
    expect(tree.service_name).toBe('trace-outer');
    expect(tree.status).toBe('ok');
    const child = tree.children.find((c) => c.name === 'execute trace::inner')!;
    expect(child.service_name).toBe('trace-inner');
    expect(child.start_time_unix_nano).toBeGreaterThanOrEqual(tree.start_time_unix_nano);
    expect(child.end_time_unix_nano).toBeLessThanOrEqual(tree.end_time_unix_nano + 5_000_000);
    expect(child.attributes).toContainEqual(['function_id', 'trace::inner']);
    expect(child.events.map((e) => e.name)).toEqual(['eng.invocation.input', 'eng.invocation.output']);
  });

  it('marks a thrown error on the span with an exception event', async () => {
    const worker = client('trace-failing');
    const caller = client('trace-caller-2');
    worker.registerFunction('trace::fail', async () => {
      throw new Error('the warehouse is closed');
    });
    await registered(caller, 'trace::fail');
    const root = newTraceparent();
    await expect(caller.trigger({ function_id: 'trace::fail', payload: {}, traceparent: root })).rejects.toBeInstanceOf(EngError);
    const span = await waitFor(async () => {
      const { spans } = await caller.call<{ spans: SpanNode[] }>('engine::traces::spans', { trace_id: parseTraceparent(root)!.traceId });
      return spans.find((s) => s.name === 'execute trace::fail');
    });
    expect(span.status).toBe('error');
    const exception = span.events.find((e) => e.name === 'exception')!;
    expect(exception.attributes).toContainEqual(['exception.message', 'the warehouse is closed']);
  });

  it('sends logs with the trace and span ids of the invocation', async () => {
    const worker = client('trace-logger');
    const caller = client('trace-caller-3');
    worker.registerFunction('trace::logs', async (_input, ctx) => {
      ctx.log.info('processing order', { order_id: 'o-1' });
      return { traceparent: ctx.traceparent };
    });
    await registered(caller, 'trace::logs');
    const { traceparent } = await caller.call<{ traceparent: string }>('trace::logs', {});
    const ctx = parseTraceparent(traceparent)!;
    const log = await waitFor(async () => {
      const { logs } = await caller.call<{
        logs: Array<{ body: string; trace_id: string; span_id: string; service_name: string; attributes: Record<string, unknown> }>;
      }>('engine::logs::list', { trace_id: ctx.traceId });
      return logs.find((l) => l.body === 'processing order');
    });
    expect(log.span_id).toBe(ctx.spanId);
    expect(log.service_name).toBe('trace-logger');
    expect(JSON.stringify(log.attributes)).toContain('o-1');
  });

  it('can be switched off', async () => {
    const worker = connect(engine.busUrl, { name: 'untraced', tracing: false });
    clients.push(worker);
    worker.registerFunction('trace::off', async (_input, ctx) => ({ traceparent: ctx.traceparent ?? null }));
    const caller = client('trace-caller-4');
    await registered(caller, 'trace::off');
    const root = newTraceparent();
    const result = await caller.trigger<{ traceparent: string }>({ function_id: 'trace::off', payload: {}, traceparent: root });
    expect(result.traceparent).toBe(root); // the context passes through untouched
    await new Promise((r) => setTimeout(r, 300));
    const { spans } = await caller.call<{ spans: SpanNode[] }>('engine::traces::spans', { trace_id: parseTraceparent(root)!.traceId });
    expect(spans.filter((s) => s.name === 'execute trace::off')).toEqual([]);
  });
});

describe('payload previews', () => {
  it('redact string values under secret-looking keys and stay short', async () => {
    const { payloadPreview } = await import('../src/tracing.ts');
    const text = payloadPreview({ headers: { authorization: 'Bearer abc', 'x-api-key': 'k"q', host: 'h' }, password: 'p', n: 1 });
    expect(text).toBe('{"headers":{"authorization":"[redacted]","x-api-key":"[redacted]","host":"h"},"password":"[redacted]","n":1}');
    expect(payloadPreview({ big: 'x'.repeat(10_000) }).length).toBeLessThanOrEqual(2049);
  });
});
