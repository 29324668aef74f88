/**
 * Logs join their traces: a handler called within a trace that writes `engine::log::*` (or uses the
 * SDK's logger) produces a log carrying that trace's id and the handler's span id, so the Logs
 * page's trace column and a span's Logs tab find it.
 */
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

let engine: EngineProcess;
let worker: EngClient;
let client: RawClient;
let http: string;

interface Log {
  body: unknown;
  trace_id: string | null;
  span_id: string | null;
}
interface Span {
  trace_id: string;
  span_id: string;
  name: string;
}

beforeAll(async () => {
  engine = await startEngine({
    workersYaml:
      '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-observability\n    config:\n      logs_console_output: false\n',
  });
  http = (engine.addresses.http as { url: string }).url;
  worker = connect(engine.busUrl, { name: 'log-joiner' });
  worker.registerFunction('logs::through_engine', async (input: { tag: string }) => {
    await worker.call('engine::log::info', { message: `engine log ${input.tag}` });
    return { status_code: 200, body: { ok: true } };
  });
  worker.registerFunction('logs::through_logger', async (input: { tag: string }, ctx) => {
    ctx.log.warn(`sdk log ${input.tag}`);
    return { ok: true };
  });
  worker.registerTrigger({ type: 'http', function_id: 'logs::through_engine', config: { api_path: 'logs/engine', http_method: 'POST' } });
  await worker.ready();
  client = await RawClient.worker(engine.busUrl);
});
afterAll(async () => {
  await client?.terminate();
  await worker?.close();
  await engine?.stop();
});

const findLog = (text: string) =>
  waitFor(async () => {
    const { logs } = await client.result<{ logs: Log[] }>('engine::logs::list', { search: text });
    return logs[0];
  }, 15_000);

const spansOf = (traceId: string) => client.result<{ spans: Span[] }>('engine::traces::spans', { trace_id: traceId }).then((r) => r.spans);

describe('logs written inside a traced call carry its trace context', () => {
  it('engine::log::info from a handler behind an HTTP trigger joins the request trace at the handler span', async () => {
    const res = await fetch(`${http}/logs/engine`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"tag":"A"}',
    });
    expect(res.status).toBe(200);
    const log = await findLog('engine log');
    expect(log.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(log.span_id).toMatch(/^[0-9a-f]{16}$/);
    // the log's trace is the request's: it holds the HTTP server span, and the log points at a span of it
    const spans = await waitFor(async () => {
      const list = await spansOf(log.trace_id as string);
      return list.some((s) => s.span_id === log.span_id) ? list : null;
    }, 15_000);
    expect(spans.some((s) => /POST/.test(s.name))).toBe(true);
  });

  it("the SDK's logger inside a handler carries the call's trace", async () => {
    const traceId = 'ab'.repeat(16);
    const frame = await client.call('logs::through_logger', { tag: 'B' }, { traceparent: `00-${traceId}-${'cd'.repeat(8)}-01` });
    expect(frame.error).toBeUndefined();
    const log = await findLog('sdk log B');
    expect(log.trace_id).toBe(traceId);
    expect(log.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('a direct call with a traceparent and no explicit ids is joined; explicit ids still win; no context stays null', async () => {
    const traceId = '12'.repeat(16);
    const spanId = '34'.repeat(8);
    await client.call('engine::log::info', { message: 'raw joined' }, { traceparent: `00-${traceId}-${spanId}-01` });
    expect(await findLog('raw joined')).toMatchObject({ trace_id: traceId, span_id: spanId });
    await client.call(
      'engine::log::info',
      { message: 'raw explicit', trace_id: '56'.repeat(16), span_id: '78'.repeat(8) },
      { traceparent: `00-${traceId}-${spanId}-01` },
    );
    expect(await findLog('raw explicit')).toMatchObject({ trace_id: '56'.repeat(16), span_id: '78'.repeat(8) });
    await client.call('engine::log::info', { message: 'raw bare' }, { traceparent: 'garbage' });
    expect(await findLog('raw bare')).toMatchObject({ trace_id: null, span_id: null });
  });
});
