/**
 * Issue 24 item 12, in process: the scrubber (one precompiled matcher), the engine's registry of
 * credential values, which environment variables count as credentials, and the collector applying
 * it to every string of a record before the limits cut it.
 */
import type { StoredLog, StoredSpan } from '@eng/protocol';
import { describe, expect, it } from 'vitest';
import { ServiceMap } from '../src/core/module.ts';
import { Collector } from '../src/modules/observability/collector.ts';
import { DEFAULT_LIMITS } from '../src/modules/observability/limits.ts';
import { LogStore } from '../src/modules/observability/log-store.ts';
import { compileScrubber, REDACTED_VALUE as R } from '../src/modules/observability/scrub.ts';
import { credentialEnvValues, MIN_SECRET_LENGTH, SecretRegistry, secretRegistry } from '../src/modules/observability/secret-registry.ts';
import { SpanStore } from '../src/modules/observability/span-store.ts';

describe('compileScrubber', () => {
  it('is null with nothing to scrub', () => {
    expect(compileScrubber([])).toBeNull();
    expect(compileScrubber([''])).toBeNull();
  });

  it('replaces every occurrence, returns the same string when there is none', () => {
    const scrub = compileScrubber(['sk-abc.def+123', 'second-secret'])!;
    const text = 'no secret in here at all';
    expect(scrub(text)).toBe(text);
    expect(scrub('a sk-abc.def+123 b sk-abc.def+123 second-secret')).toBe(`a ${R} b ${R} ${R}`);
    // regex metacharacters in a value are literal
    expect(scrub('sk-abcXdef+123')).toBe('sk-abcXdef+123');
    expect(scrub('short')).toBe('short');
  });

  it('replaces the longest value first, and a value as quoted inside JSON text', () => {
    const scrub = compileScrubber(['token-123456', 'token-123456-extended', 'pa"ss\\word-1'])!;
    expect(scrub('x token-123456-extended y')).toBe(`x ${R} y`);
    expect(scrub(JSON.stringify({ text: 'pa"ss\\word-1' }))).toBe(`{"text":"${R}"}`);
  });
});

describe('SecretRegistry', () => {
  it('keeps values of at least MIN_SECRET_LENGTH per source, tells listeners of changes only', () => {
    const registry = new SecretRegistry();
    let changes = 0;
    const off = registry.onChange(() => changes++);
    registry.set('a', ['x'.repeat(MIN_SECRET_LENGTH - 1), 'long-enough-1', 'long-enough-1']);
    registry.set('b', ['long-enough-1', 'long-enough-2']);
    expect(registry.values().sort()).toEqual(['long-enough-1', 'long-enough-2']);
    expect(changes).toBe(2);
    registry.set('b', ['long-enough-2', 'long-enough-1']);
    expect(changes).toBe(2);
    registry.set('b', []);
    expect(registry.values()).toEqual(['long-enough-1']);
    off();
    registry.set('a', []);
    expect(changes).toBe(3);
  });

  it('is one per engine, whichever module asks first', () => {
    const services = new ServiceMap();
    expect(secretRegistry(services)).toBe(secretRegistry(services));
  });
});

describe('credentialEnvValues', () => {
  it('takes credential-named variables only', () => {
    const env = {
      OPENAI_API_KEY: 'v1',
      GITHUB_TOKEN: 'v2',
      JWT_SECRET: 'v3',
      AWS_SECRET_ACCESS_KEY: 'v4',
      PGPASSWORD: 'v5',
      DB_PASSWD: 'v6',
      SSH_PRIVATE_KEY: 'v7',
      GOOGLE_APPLICATION_CREDENTIALS: 'v8',
      STRIPE_APIKEY: 'v9',
      PATH: 'n1',
      MAX_TOKENS: 'n2',
      TOKENIZERS_PARALLELISM: 'n3',
      HOME: 'n4',
      KEYBOARD_LAYOUT: 'n5',
    };
    expect(credentialEnvValues(env).sort()).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9']);
    expect(credentialEnvValues({ NPM_TOKEN: '  spaced-token  ' })).toEqual(['  spaced-token  ', 'spaced-token']);
  });
});

describe('Collector with a scrubber', () => {
  const secret = 'sk-live-0123456789abcdef';
  const span = (overrides: Partial<StoredSpan> = {}): StoredSpan => ({
    trace_id: 'a'.repeat(32),
    span_id: 'b'.repeat(16),
    parent_span_id: null,
    name: `call ${secret}`,
    start_time_unix_nano: 1,
    end_time_unix_nano: 2,
    status: 'error',
    status_description: `E: ${secret}`,
    attributes: [[`k-${secret}`, `v-${secret}`]],
    service_name: 'svc',
    events: [{ name: 'exception', timestamp_unix_nano: 1, attributes: [['exception.message', secret]] }],
    links: [{ trace_id: 'c'.repeat(32), span_id: 'd'.repeat(16), trace_state: null, attributes: [['l', secret]] }],
    ...overrides,
  });

  it('scrubs every string of a span and a log record, and nothing once the scrubber is cleared', () => {
    const spans = new SpanStore(100, Number.POSITIVE_INFINITY);
    const logs = new LogStore(100, 60_000, Number.POSITIVE_INFINITY);
    const collector = new Collector(spans, logs, () => {});
    collector.setScrub(compileScrubber([secret]));
    collector.addSpan(span());
    const stored = spans.get('a'.repeat(32), 'b'.repeat(16))?.toSpan();
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(stored).toMatchObject({ name: `call ${R}`, status_description: `E: ${R}`, attributes: [[`k-${R}`, `v-${R}`]] });

    const log: StoredLog = {
      timestamp_unix_nano: Date.now() * 1e6,
      observed_timestamp_unix_nano: Date.now() * 1e6,
      severity_number: 9,
      severity_text: 'INFO',
      body: `body ${secret}`,
      attributes: { nested: { list: [secret, 'kept'] } },
      trace_id: null,
      span_id: null,
      resource: { 'service.name': 'svc', token: secret },
      service_name: 'svc',
    };
    expect(collector.addLog(log)).toMatchObject({
      body: `body ${R}`,
      attributes: { nested: { list: [R, 'kept'] } },
      resource: { token: R },
    });

    collector.setScrub(null);
    expect(collector.addLog({ ...log, resource: {} }).body).toBe(`body ${secret}`);
  });

  it('scrubs before cutting to the limits, so no prefix of a secret is left at the cut', () => {
    const collector = new Collector(null, null, () => {}, { ...DEFAULT_LIMITS, logBodyBytes: 64 });
    collector.setScrub(compileScrubber([secret]));
    const body = `${'x'.repeat(50)}${secret}${'y'.repeat(100)}`;
    const stored = collector.addLog({
      timestamp_unix_nano: 1,
      observed_timestamp_unix_nano: 1,
      severity_number: 9,
      severity_text: 'INFO',
      body,
      attributes: {},
      trace_id: null,
      span_id: null,
      resource: {},
      service_name: 'svc',
    });
    expect(stored.body.startsWith(`${'x'.repeat(50)}${R}`)).toBe(true);
    expect(stored.body).not.toContain(secret.slice(0, 8));
  });
});
