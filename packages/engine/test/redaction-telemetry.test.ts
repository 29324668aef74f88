/**
 * Issue 24 item 12: a credential quoted inside a payload string used to be stored as span and log
 * text (redaction looked at field names only). Against a real engine, a real @eng/sdk worker and
 * raw OTLP frames: the value of a configuration secret and of a credential-named variable of the
 * engine's environment read `[REDACTED]` wherever they appear in stored spans (name, attributes,
 * events, status) and log records (body, attributes), whoever produced them; other text is kept
 * as it came, and a secret changed at runtime is scrubbed from then on.
 */
import type { StoredLog, StoredSpan } from '@eng/protocol';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { frame, hex, logsRequest, otelSocket, rawClients, sendFrames, tracesRequest } from './observability-helpers.ts';

const ENV_KEY = `sk-test-${hex(12)}`;
/** A credential-named variable too short to scrub (every `abc1234` of every record would go). */
const SHORT = 'tok1234';
/** A long value under a name that is no credential's. */
const PLAIN = `plain-setting-${hex(6)}`;
const CFG1 = `cfg-secret-${hex(10)}`;
const CFG2 = `cfg-rotated-${hex(10)}`;
const NOTE = `visible-note-${hex(6)}`;
const R = '[REDACTED]';

const raw = rawClients();
let engine: EngineProcess;
let worker: EngClient;
let otel: WebSocket;

beforeAll(async () => {
  engine = await startEngine({
    env: { OPENAI_API_KEY: ENV_KEY, ENG_TEST_SHORT_TOKEN: SHORT, ENG_TEST_PLAIN_SETTING: PLAIN },
    workersYaml: ['  - name: eng-pubsub', '  - name: eng-observability', '    config:', '      logs_console_output: false', ''].join('\n'),
  });
  // tracing with payloads: the SDK records what its handlers receive and return, and their logs
  worker = connect(engine.busUrl, { name: 'redaction-worker', tracing: { payloads: true } });
  worker.registerFunction('redact::echo', (input: { text: string }, ctx) => {
    ctx.log.info(`echo ${input.text}`, { text: input.text });
    return { echoed: input.text };
  });
  worker.registerFunction('redact::fail', (input: { text: string }) => {
    throw new Error(`upstream refused ${input.text}`);
  });
  worker.registerTrigger({ type: 'subscribe', function_id: 'redact::fail', config: { topic: 'redact-topic' } });
  await worker.ready({ timeoutMs: 10_000 });
  await worker.call('configuration::register', {
    id: 'redact-entry',
    schema: { type: 'object', properties: { api_key: { type: 'string', writeOnly: true }, note: { type: 'string' } } },
    initial_value: { api_key: CFG1, note: NOTE },
  });
  await waitFor(async () => {
    const listed = JSON.stringify(await worker.call('engine::registered-triggers::list', {}));
    return listed.includes('redact-topic') && JSON.stringify(await worker.call('engine::functions::list', {})).includes('redact::fail');
  }, 10_000);
  otel = await otelSocket(engine.busUrl);
});
afterAll(async () => {
  otel?.close();
  await raw.closeAll();
  await worker?.close();
  await engine?.stop();
});

async function spansText(): Promise<string> {
  const listed = await worker.call<{ spans: StoredSpan[] }>('engine::traces::list', {
    search_all_spans: true,
    include_internal: true,
    limit: 100_000,
  });
  return JSON.stringify(listed.spans);
}
async function logs(): Promise<StoredLog[]> {
  return (await worker.call<{ logs: StoredLog[] }>('engine::logs::list', {})).logs;
}
function expectNoSecret(text: string): void {
  for (const secret of [CFG1, CFG2, ENV_KEY]) expect(text).not.toContain(secret);
}

describe('credential values in telemetry', () => {
  it('a worker payload quoting a configuration secret and an env credential is stored redacted (spans and logs)', async () => {
    const marker = `m1-${hex(4)}`;
    const text = `${marker} before ${CFG1} mid ${ENV_KEY} after ${PLAIN} ${SHORT} ${NOTE}`;
    const shown = `${marker} before ${R} mid ${R} after ${PLAIN} ${SHORT} ${NOTE}`;
    expect(await worker.call('redact::echo', { text })).toEqual({ echoed: text });
    // the SDK ships its spans and logs every 100 ms
    const spans = await waitFor(async () => {
      const all = await spansText();
      return all.includes(`${marker} before`) && all.includes('eng.invocation.output') ? all : null;
    }, 15_000);
    expectNoSecret(spans);
    // the handler's input and output events (JSON previews) keep everything else as it came
    expect(spans).toContain(shown);
    expect(spans.split(shown).length - 1).toBeGreaterThanOrEqual(2);

    const record = await waitFor(async () => (await logs()).find((l) => l.body.includes(marker)), 15_000);
    expect(record.body).toBe(`echo ${shown}`);
    // @eng/sdk sends the data as JSON text: scrubbed inside it as well
    expect(JSON.stringify(record.attributes['log.data'])).toContain(shown);
    expectNoSecret(JSON.stringify(await logs()));
  });

  it('raw OTLP spans and logs on /otel: name, attributes, events, status message and body', async () => {
    const traceId = hex(16);
    const span = tracesRequest([
      {
        traceId,
        name: `op ${CFG1}`,
        service: 'raw-otlp',
        startMs: Date.now() - 20,
        durationMs: 5,
        attributes: { note: `x${ENV_KEY}y`, safe: PLAIN, [`key-${CFG1}`]: 'v' },
      },
    ]);
    const otlp = span.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    Object.assign(otlp, {
      status: { code: 2, message: `failed: ${CFG1}` },
      events: [
        { timeUnixNano: otlp.startTimeUnixNano, name: 'retry', attributes: [{ key: 'k', value: { stringValue: `key=${ENV_KEY}` } }] },
      ],
    });
    const log = logsRequest([
      {
        timeMs: Date.now(),
        severity: 9,
        body: `login with ${ENV_KEY}`,
        service: 'raw-otlp',
        traceId,
        attributes: { cred: CFG1, safe: PLAIN },
      },
    ]);
    await sendFrames(otel, [frame('OTLP', span), frame('LOGS', log)]);
    const [stored] = await waitFor(async () => {
      const { spans } = await worker.call<{ spans: StoredSpan[] }>('engine::traces::spans', { trace_id: traceId });
      return spans.length ? spans : null;
    }, 10_000);
    expect(stored!.name).toBe(`op ${R}`);
    expect(stored!.status_description).toBe(`failed: ${R}`);
    expect(Object.fromEntries(stored!.attributes)).toMatchObject({ note: `x${R}y`, safe: PLAIN, [`key-${R}`]: 'v' });
    expect(stored!.events[0]!.attributes).toEqual([['k', `key=${R}`]]);
    expectNoSecret(JSON.stringify(stored));

    const [record] = await waitFor(async () => {
      const found = (await worker.call<{ logs: StoredLog[] }>('engine::logs::list', { trace_id: traceId })).logs;
      return found.length ? found : null;
    }, 10_000);
    expect(record!.body).toBe(`login with ${R}`);
    expect(record!.attributes).toMatchObject({ cred: R, safe: PLAIN });
  });

  it("the engine's own records: engine::log::*, a call span's status and engine log lines", async () => {
    const marker = `m3-${hex(4)}`;
    await worker.call('engine::log::warn', { message: `${marker} engine log ${CFG1}`, data: { nested: { deep: [ENV_KEY, PLAIN] } } });
    const logged = await waitFor(async () => (await logs()).find((l) => l.body.startsWith(marker)), 10_000);
    expect(logged.body).toBe(`${marker} engine log ${R}`);
    expect(logged.attributes['log.data']).toEqual({ nested: { deep: [R, PLAIN] } });

    // a call without trace context: the engine's root span `call redact::fail` ends with the error
    const client = await raw.open(engine.busUrl);
    const failed = await client.call('redact::fail', { text: `${marker} ${CFG1}` });
    expect((failed.error as { message: string }).message).toContain(CFG1); // the caller gets its answer as it was
    const span = await waitFor(async () => {
      const { spans } = await worker.call<{ spans: StoredSpan[] }>('engine::traces::list', {
        name: 'call redact::fail',
        include_internal: true,
      });
      return spans.find((s) => s.status_description?.includes(marker));
    }, 10_000);
    expect(span.status_description).toContain(`upstream refused ${marker} ${R}`);

    // a subscriber failing: eng-pubsub logs a warning quoting the error, stored as an engine record
    await worker.call('publish', { topic: 'redact-topic', data: { text: `${marker}-pub ${ENV_KEY}` } });
    const line = await waitFor(async () => (await logs()).find((l) => l.body.includes(`${marker}-pub`)), 10_000);
    expect(line.service_name).toBe('eng');
    expect(line.body).toContain(`upstream refused ${marker}-pub ${R}`);

    await new Promise((r) => setTimeout(r, 300)); // the worker's own spans of these calls
    expectNoSecret(await spansText());
    expectNoSecret(JSON.stringify(await logs()));
    // and the engine's own stderr, where the same warning was printed
    expect(engine.logs()).toContain(`${marker}-pub`);
    expectNoSecret(engine.logs());
  });

  it('a secret changed at runtime is scrubbed from then on; readable configuration fields never are', async () => {
    await worker.call('configuration::set', { id: 'redact-entry', value: { api_key: CFG2, note: NOTE } });
    const marker = `m4-${hex(4)}`;
    await worker.call('redact::echo', { text: `${marker} rotated ${CFG2} note ${NOTE}` });
    const record = await waitFor(async () => (await logs()).find((l) => l.body.includes(marker)), 15_000);
    expect(record.body).toBe(`echo ${marker} rotated ${R} note ${NOTE}`);
    const spans = await waitFor(async () => {
      const all = await spansText();
      return all.includes(`${marker} rotated`) ? all : null;
    }, 15_000);
    expect(spans).toContain(`${marker} rotated ${R} note ${NOTE}`);
    expect(spans).not.toContain(CFG2);
  });
});
