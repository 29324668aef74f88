/**
 * One request, one trace: the calls a traced call causes through pub/sub, state triggers and stream
 * triggers carry its trace context, so their handlers' spans join the same trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';

let engine: EngineProcess;
let caller: RawClient;
let handler: RawClient;

const TRACE = 'fe'.repeat(16);
const traceparent = `00-${TRACE}-${'dc'.repeat(8)}-01`;
const traceOf = (frame: RawFrame) => /^00-([0-9a-f]{32})-/.exec(String(frame.traceparent ?? ''))?.[1];

beforeAll(async () => {
  engine = await startEngine({
    workersYaml:
      '  - name: eng-pubsub\n  - name: eng-state\n  - name: eng-stream\n    config:\n      port: {{STREAMS_PORT}}\n  - name: eng-observability\n    config:\n      logs_console_output: false\n',
  });
  caller = await RawClient.worker(engine.busUrl);
  handler = await RawClient.worker(engine.busUrl);
  // answers every call so no invocation stays pending
  handler.socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as RawFrame;
    if (frame.type === 'invokefunction' && frame.invocation_id)
      handler.send({ type: 'invocationresult', invocation_id: frame.invocation_id, result: null });
  });
  const bind = (id: string, trigger_type: string, config: object) => {
    handler.send({ type: 'registerfunction', id });
    handler.send({ type: 'registertrigger', id: `${id}-binding`, trigger_type, function_id: id, config });
  };
  bind('prop::on_topic', 'subscribe', { topic: 'prop.topic' });
  bind('prop::on_state', 'state', { scope: 'prop-scope' });
  bind('prop::on_stream', 'stream', { stream_name: 'prop-stream' });
  await waitFor(async () => {
    const { registered_triggers } = await caller.result('engine::registered-triggers::list', {});
    return (
      registered_triggers.filter((t: { id: string; status: string }) => t.id.startsWith('prop::') && t.status === 'active').length === 3
    );
  }, 10_000);
});
afterAll(async () => {
  await caller?.terminate();
  await handler?.terminate();
  await engine?.stop();
});

const firstCallOf = (functionId: string) => handler.next((f) => f.type === 'invokefunction' && f.function_id === functionId, 10_000);

describe('trace context crosses the engine with the data', () => {
  it('publish: a subscriber is called within the publisher trace', async () => {
    const seen = firstCallOf('prop::on_topic');
    await caller.call('publish', { topic: 'prop.topic', data: { n: 1 } }, { traceparent });
    expect(traceOf(await seen)).toBe(TRACE);
  });

  it('state::set: the state trigger handler is called within the writer trace', async () => {
    const seen = firstCallOf('prop::on_state');
    await caller.call('state::set', { scope: 'prop-scope', key: 'k', value: 1 }, { traceparent });
    expect(traceOf(await seen)).toBe(TRACE);
  });

  it('stream::set: the stream trigger handler is called within the writer trace', async () => {
    const seen = firstCallOf('prop::on_stream');
    await caller.call('stream::set', { stream_name: 'prop-stream', group_id: 'g', item_id: 'i', data: { n: 1 } }, { traceparent });
    expect(traceOf(await seen)).toBe(TRACE);
  });
});
