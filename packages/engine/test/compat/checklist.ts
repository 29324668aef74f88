/**
 * The compatibility checklist of engine-protocol §11, run unchanged against either published
 * iii-sdk version. Here: items 1, 2, 3, 4 and 14; `runChecklist` also defines 11 and 12
 * (trigger-checks.ts), 16 (introspection-checks.ts), 13 (reconnect-checks.ts) and the @eng/sdk
 * peer (cross-sdk-checks.ts). Version-only items (15, the 0.22.1 `…::info` functions, reattach
 * eviction, 0.11.6 registerService) live in that version's test file.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { spawnIiiWorker } from './child-worker.ts';
import { type CompatEnv, ready, sha256, sleep, UUID } from './compat-env.ts';
import { runCrossSdkChecks } from './cross-sdk-checks.ts';
import { runIntrospectionChecks } from './introspection-checks.ts';
import { runReconnectChecks } from './reconnect-checks.ts';
import { runTriggerChecks } from './trigger-checks.ts';
import { startWireTap } from './wire-tap.ts';

/** Defines every shared check for the SDK version `env` was set up with. */
export function runChecklist(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;
  const list = async <T = any>(functionId: string, payload: unknown = {}): Promise<T> => env.call<T>(functionId, payload);

  describe(`iii-sdk ${v} §11.1 connect`, () => {
    it('is greeted with workerregistered (worker id + reattach token) and listed with runtime node, its pid, version and name', async () => {
      const tap = await startWireTap(env.engine.busUrl);
      try {
        const child = await spawnIiiWorker({ version: v, url: tap.url, prefix: 'hello', name: `hello-${v}` });
        const connection = tap.connections[0]!;
        // spec §2.3.1 / §9 row 1: the first frame, with the token even for 0.11.6 (it ignores it)
        expect(connection.received[0]).toEqual({
          type: 'workerregistered',
          worker_id: child.workerId,
          reattach_token: expect.stringMatching(UUID),
        });
        expect(child.workerId).toMatch(UUID);
        // §4.2: the SDK's engine::workers::register (void) makes it visible
        const listed = await waitFor(async () => {
          const { workers } = await list<{ workers: any[] }>('engine::workers::list');
          return workers.find((w) => w.id === child.workerId && w.pid !== null);
        });
        expect(listed).toMatchObject({
          name: `hello-${v}`,
          runtime: 'node',
          version: v,
          pid: child.pid,
          status: 'connected',
          ip_address: '127.0.0.1',
          function_count: 2,
          functions: ['hello::echo', 'hello::hang'],
        });
        expect(listed.pid).not.toBe(process.pid);
        const registration = connection.sent.find((f) => f.function_id === 'engine::workers::register');
        expect(registration).toMatchObject({
          type: 'invokefunction',
          action: { type: 'void' },
          data: { runtime: 'node', version: v, pid: child.pid },
        });
        // the SDK's OpenTelemetry socket (on by default in the child) was accepted and stayed open:
        // one connection, no reconnect loop (§2.12)
        await waitFor(() => tap.others.some((o) => o.path === '/otel'));
        expect(tap.others.filter((o) => o.path === '/otel')).toEqual([expect.objectContaining({ open: true })]);
        await child.kill();
        await waitFor(async () => {
          const { workers } = await list<{ workers: any[] }>('engine::workers::list');
          return !workers.some((w) => w.id === child.workerId);
        });
      } finally {
        await tap.close();
      }
    });

    it('lists the in-process workers under the names they registered', async () => {
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      expect(workers.find((w) => w.id === env.aId)).toMatchObject({ name: `compat-a-${v}`, runtime: 'node', version: v, pid: process.pid });
      expect(workers.find((w) => w.id === env.bId)).toMatchObject({ name: `compat-b-${v}`, runtime: 'node', version: v, pid: process.pid });
    });
  });

  describe(`iii-sdk ${v} §11.2 function round trip`, () => {
    it('calls a function on another worker both ways; object payloads arrive with _caller_worker_id', async () => {
      const seen: unknown[] = [];
      env.a.registerFunction('rt::echo-a', async (input) => {
        seen.push(input);
        return { echoed: input };
      });
      env.b.registerFunction('rt::echo-b', async (input) => input);
      await Promise.all([ready(env.a), ready(env.b)]);

      const payload = { x: 1, nested: { list: [1, 'two', null, { deep: true }] }, text: 'héllo ✓' };
      // §2.3.9: we keep the injection iii does; handlers see the caller's worker id
      expect(await env.b.trigger({ function_id: 'rt::echo-a', payload })).toEqual({ echoed: { ...payload, _caller_worker_id: env.bId } });
      expect(seen).toEqual([{ ...payload, _caller_worker_id: env.bId }]);
      expect(await env.a.trigger({ function_id: 'rt::echo-b', payload: { y: 2 } })).toEqual({ y: 2, _caller_worker_id: env.aId });
    });

    it('does not let a caller spoof _caller_worker_id and leaves non-object payloads untouched', async () => {
      env.b.registerFunction('rt::identity', async (input) => input);
      await ready(env.b);
      const call = (payload: unknown) => env.a.trigger({ function_id: 'rt::identity', payload });
      expect(await call({ _caller_worker_id: 'spoofed' })).toEqual({ _caller_worker_id: env.aId });
      expect(await call([1, 2, 3])).toEqual([1, 2, 3]);
      expect(await call('plain text')).toBe('plain text');
      expect(await call(42)).toBe(42);
      expect(await call(null)).toBeNull();
    });

    it('delivers a call made without a payload (the SDK omits `data`) as null instead of timing out', async () => {
      const seen: unknown[] = [];
      env.b.registerFunction('rt::no-payload', async (input) => {
        seen.push(input);
        return 'ran';
      });
      await ready(env.b);
      expect(await env.a.trigger({ function_id: 'rt::no-payload', payload: undefined, timeoutMs: 3000 })).toBe('ran');
      expect(seen).toEqual([null]);
    });

    it('resolves undefined when the handler returns nothing', async () => {
      env.b.registerFunction('rt::nothing', async () => undefined);
      await ready(env.b);
      expect(await env.a.trigger({ function_id: 'rt::nothing', payload: {} })).toBeUndefined();
    });
  });

  describe(`iii-sdk ${v} calls under load`, () => {
    it('matches 300 concurrent calls to their own results', async () => {
      env.a.registerFunction('load::square', async (input) => {
        await sleep(Math.random() * 20);
        return { n: input.n, square: input.n * input.n };
      });
      await ready(env.a);
      const ns = Array.from({ length: 300 }, (_, i) => i);
      const results = await Promise.all(ns.map((n) => env.b.trigger({ function_id: 'load::square', payload: { n } })));
      expect(results).toEqual(ns.map((n) => ({ n, square: n * n })));
    });

    it('round-trips a 4 MB payload intact', async () => {
      env.a.registerFunction('load::size', async (input) => ({
        length: input.blob.length,
        head: input.blob.slice(0, 8),
        echo: input.blob,
      }));
      await ready(env.a);
      const blob = randomBytes(3_000_000).toString('base64');
      const result = await env.b.trigger({ function_id: 'load::size', payload: { blob } });
      expect(result.length).toBe(blob.length);
      expect(result.echo === blob).toBe(true);
    });
  });

  describe(`iii-sdk ${v} §11.3 errors`, () => {
    it('rejects with invocation_failed and the message when the handler throws', async () => {
      env.a.registerFunction('err::boom', async () => {
        throw new Error('sku ABC-1 is out of stock');
      });
      await ready(env.a);
      const err = await env.b.trigger({ function_id: 'err::boom', payload: { sku: 'ABC-1' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({
        code: 'invocation_failed',
        message: 'invocation_failed: sku ABC-1 is out of stock',
        function_id: 'err::boom',
      });
      expect((err as { stacktrace?: string }).stacktrace).toContain('sku ABC-1 is out of stock');
    });

    it('rejects with function_not_found for an unknown function id', async () => {
      const err = await env.b.trigger({ function_id: 'err::nobody-home', payload: {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({ code: 'function_not_found', message: 'function_not_found: Function err::nobody-home not found' });
    });

    it('rejects with TIMEOUT after timeoutMs on a slow handler, and the late result harms nothing', async () => {
      let finished = false;
      env.a.registerFunction('err::slow', async () => {
        await sleep(800);
        finished = true;
        return 'late';
      });
      await ready(env.a);
      const started = Date.now();
      const err = await env.b.trigger({ function_id: 'err::slow', payload: {}, timeoutMs: 100 }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(err).toMatchObject({ code: 'TIMEOUT', message: 'TIMEOUT: invocation timed out after 100ms' });
      expect(elapsed).toBeGreaterThanOrEqual(95);
      // the caller gave up while the handler was still working
      expect(finished).toBe(false);
      await waitFor(() => finished, 3000);
      // the engine relayed the late result to B, whose SDK dropped it; B keeps working
      expect(await env.b.trigger({ function_id: 'err::slow', payload: {} })).toBe('late');
    });
  });

  describe(`iii-sdk ${v} §11.4 void`, () => {
    it('resolves undefined at once while the handler still runs', async () => {
      let release!: (input: unknown) => void;
      const ran = new Promise<unknown>((r) => {
        release = r;
      });
      let finished = false;
      env.a.registerFunction('void::record', async (input) => {
        await sleep(300);
        finished = true;
        release(input);
        return { ignored: true };
      });
      env.a.registerFunction('void::ping', async () => 'pong');
      await ready(env.a);
      expect(await env.b.trigger({ function_id: 'void::record', payload: { n: 1 }, action: sdk.voidAction() })).toBeUndefined();
      // resolved without waiting for the handler
      expect(finished).toBe(false);
      expect(await ran).toEqual({ n: 1, _caller_worker_id: env.bId });
      // the engine discarded the handler's result: B's next call gets its own answer
      expect(await env.b.trigger({ function_id: 'void::ping', payload: {} })).toBe('pong');
    });
  });

  describe(`iii-sdk ${v} §11.14 channels`, () => {
    it('streams bytes intact from a writer to a reader ref passed in a payload', async () => {
      env.b.registerFunction('chan::consume', async (input) => {
        const bytes = await input.reader.readAll();
        return { length: bytes.length, sha256: sha256(bytes), label: input.label };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a);
      expect(channel.readerRef).toEqual({
        channel_id: channel.writerRef.channel_id,
        access_key: channel.writerRef.access_key,
        direction: 'read',
      });
      // 300 KB: the SDK writer cuts it into 64 KiB frames
      const data = randomBytes(300_000);
      const consumed = env.a.trigger({ function_id: 'chan::consume', payload: { reader: channel.readerRef, label: 'blob' } });
      channel.writer.stream.write(data.subarray(0, 100_000));
      channel.writer.stream.end(data.subarray(100_000));
      expect(await consumed).toEqual({ length: data.length, sha256: sha256(data), label: 'blob' });
    });

    it('holds the writer back while a small buffer is full and still delivers every byte in order', async () => {
      env.b.registerFunction('chan::late-reader', async (input) => {
        // start reading late, so the 2-frame buffer fills and the engine pauses the writer
        await sleep(300);
        const bytes = await input.reader.readAll();
        return { length: bytes.length, sha256: sha256(bytes) };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a, 2);
      const data = randomBytes(1_000_000);
      const consumed = env.a.trigger({ function_id: 'chan::late-reader', payload: { reader: channel.readerRef } });
      channel.writer.stream.end(data);
      expect(await consumed).toEqual({ length: data.length, sha256: sha256(data) });
    });

    it('relays text messages (sendMessage → onMessage) next to the bytes', async () => {
      env.b.registerFunction('chan::messages', async (input) => {
        const messages: string[] = [];
        input.reader.onMessage((text: string) => messages.push(text));
        const bytes = await input.reader.readAll();
        return { messages, length: bytes.length };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a);
      const consumed = env.a.trigger({ function_id: 'chan::messages', payload: { reader: channel.readerRef } });
      channel.writer.sendMessage(JSON.stringify({ type: 'set_status', status_code: 201 }));
      channel.writer.sendMessage('second ✓');
      channel.writer.stream.end(Buffer.from('body bytes'));
      expect(await consumed).toEqual({ messages: ['{"type":"set_status","status_code":201}', 'second ✓'], length: 10 });
    });

    it('lets the other worker write: a writer ref in a payload streams back to our reader', async () => {
      env.b.registerFunction('chan::produce', async (input) => {
        const chunk = Buffer.alloc(70_000, 7);
        for (let i = 0; i < input.chunks; i++) input.writer.stream.write(chunk);
        input.writer.stream.end();
        return { wrote: input.chunks * chunk.length };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a);
      const [received, answer] = await Promise.all([
        channel.reader.readAll(),
        env.a.trigger({ function_id: 'chan::produce', payload: { writer: channel.writerRef, chunks: 3 } }),
      ]);
      expect(answer).toEqual({ wrote: 210_000 });
      expect(received.equals(Buffer.alloc(210_000, 7))).toBe(true);
    });
  });

  runTriggerChecks(env);
  runIntrospectionChecks(env);
  runReconnectChecks(env);
  runCrossSdkChecks(env);
}
