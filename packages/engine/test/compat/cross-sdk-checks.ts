/**
 * A worker written with the published iii-sdk and one written with our @eng/sdk, on the same
 * engine, call each other's functions both ways: results, errors, void calls and channels.
 */
import { randomBytes } from 'node:crypto';
import { connect, type EngClient, EngError } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { type CompatEnv, ready, sha256 } from './compat-env.ts';

export function runCrossSdkChecks(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;

  describe(`iii-sdk ${v} ↔ @eng/sdk`, () => {
    let eng: EngClient;
    beforeAll(async () => {
      eng = connect(env.engine.busUrl, { name: `eng-sdk-peer-${v}` });
      await eng.ready({ timeoutMs: 10_000 });
    });
    afterAll(async () => {
      await eng?.close();
    });

    it('call each other’s functions both ways, with _caller_worker_id on each side', async () => {
      eng.registerFunction('engsdk::greet', (input: { name: string }, ctx) => ({ hello: input.name, caller: ctx.callerWorkerId }));
      env.a.registerFunction('iiisdk::shout', async (input) => ({ shouted: String(input.text).toUpperCase(), got: input }));
      await ready(env.a);
      await eng.call('engine::functions::list', {});

      expect(await env.a.trigger({ function_id: 'engsdk::greet', payload: { name: 'ada' } })).toEqual({ hello: 'ada', caller: env.aId });
      expect(await eng.call('iiisdk::shout', { text: 'hi there' })).toEqual({
        shouted: 'HI THERE',
        got: { text: 'hi there', _caller_worker_id: eng.workerId },
      });
      const { workers } = await eng.call<{ workers: Array<{ id: string; name: string; runtime: string }> }>('engine::workers::list', {});
      expect(workers.find((w) => w.id === eng.workerId)).toMatchObject({ name: `eng-sdk-peer-${v}`, runtime: 'node' });
    });

    it('carry a thrown error’s code and message across the SDK boundary both ways', async () => {
      eng.registerFunction('engsdk::fail', () => {
        throw new Error('eng side refused');
      });
      env.a.registerFunction('iiisdk::fail', async () => {
        throw new Error('iii side refused');
      });
      await ready(env.a);
      await eng.call('engine::functions::list', {});

      const fromEng = await env.a.trigger({ function_id: 'engsdk::fail', payload: {} }).catch((e: unknown) => e);
      expect(fromEng).toBeInstanceOf(sdk.ErrorClass);
      expect(fromEng).toMatchObject({ code: 'invocation_failed', message: 'invocation_failed: eng side refused' });
      const fromIii = await eng.call('iiisdk::fail', {}).catch((e: unknown) => e);
      expect(fromIii).toBeInstanceOf(EngError);
      expect(fromIii).toMatchObject({ code: 'invocation_failed', message: 'iii side refused' });
    });

    it('deliver void calls both ways', async () => {
      const engSeen: unknown[] = [];
      const iiiSeen: unknown[] = [];
      eng.registerFunction('engsdk::sink', (input) => {
        engSeen.push(input);
      });
      env.a.registerFunction('iiisdk::sink', async (input) => {
        iiiSeen.push(input);
      });
      await ready(env.a);
      await eng.call('engine::functions::list', {});
      expect(await env.a.trigger({ function_id: 'engsdk::sink', payload: { n: 1 }, action: sdk.voidAction() })).toBeUndefined();
      expect(await eng.trigger({ function_id: 'iiisdk::sink', payload: { n: 2 }, action: { type: 'void' } })).toBeUndefined();
      await waitFor(() => engSeen.length === 1 && iiiSeen.length === 1);
      expect(engSeen[0]).toEqual({ n: 1, _caller_worker_id: env.aId });
      expect(iiiSeen[0]).toEqual({ n: 2, _caller_worker_id: eng.workerId });
    });

    it('stream a channel opened by one SDK to a reader in the other, both ways', async () => {
      eng.registerFunction('engsdk::digest', async (input: { reader: { readAll(): Promise<Uint8Array> } }) => {
        const bytes = await input.reader.readAll();
        return { length: bytes.length, sha256: sha256(bytes) };
      });
      env.a.registerFunction('iiisdk::digest', async (input) => {
        const bytes: Buffer = await input.reader.readAll();
        return { length: bytes.length, sha256: sha256(bytes) };
      });
      await ready(env.a);
      await eng.call('engine::functions::list', {});

      const data = randomBytes(150_000);
      const iiiChannel = await sdk.createChannel(env.a);
      const engDigest = env.a.trigger({ function_id: 'engsdk::digest', payload: { reader: iiiChannel.readerRef } });
      iiiChannel.writer.stream.end(data);
      expect(await engDigest).toEqual({ length: data.length, sha256: sha256(data) });

      const engChannel = await eng.createChannel();
      const iiiDigest = eng.call('iiisdk::digest', { reader: engChannel.readerRef });
      await engChannel.writer.write(data);
      await engChannel.writer.end();
      expect(await iiiDigest).toEqual({ length: data.length, sha256: sha256(data) });
    });
  });
}
