import { createHash, randomBytes } from 'node:crypto';
import { ChannelReader, ChannelWriter } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { client, closeClients, functionListed, sleep } from './helpers.ts';

// spec: engine-protocol §2.11 — channels, and §2.3.9 — references in payloads become live ends

let engine: EngineProcess;
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(closeClients);
afterAll(async () => {
  await engine?.stop();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;

describe('channels', () => {
  it('streams 10 MiB from a writer to a reader handed to another worker, intact', async () => {
    const producer = client(engine.busUrl);
    const consumer = client(engine.busUrl);
    consumer.registerFunction('sdk::digest', async (input: { reader: unknown }) => {
      if (!(input.reader instanceof ChannelReader)) throw new Error('reader was not resolved to a ChannelReader');
      const bytes = await input.reader.readAll();
      return { sha256: sha256(bytes), length: bytes.byteLength };
    });
    await Promise.all([producer.ready(), consumer.ready()]);
    await functionListed(producer, 'sdk::digest');

    const data = randomBytes(10 * MiB);
    const channel = await producer.createChannel();
    expect(channel.readerRef).toMatchObject({ channel_id: channel.writerRef.channel_id, direction: 'read' });
    const result = producer.call('sdk::digest', { reader: channel.readerRef });
    // uneven pieces: the writer must re-frame them into 64 KiB frames without losing a byte
    for (let offset = 0; offset < data.length; offset += 3 * MiB + 7) {
      await channel.writer.write(data.subarray(offset, offset + 3 * MiB + 7));
    }
    await channel.writer.end();
    expect(await result).toEqual({ sha256: sha256(data), length: data.length });
  });

  it('carries text messages to onMessage listeners and bytes to readAll, from a writer handed over in a payload', async () => {
    const producer = client(engine.busUrl);
    producer.registerFunction('sdk::produce', async (input: { out: unknown; text: string }) => {
      if (!(input.out instanceof ChannelWriter)) throw new Error('out was not resolved to a ChannelWriter');
      await input.out.sendMessage(JSON.stringify({ type: 'set_status', status_code: 201 }));
      await input.out.write(input.text);
      await input.out.write(new Uint8Array([0, 255]));
      await input.out.end();
      return 'done';
    });
    await producer.ready();
    await functionListed(producer, 'sdk::produce');

    const consumer = client(engine.busUrl);
    await consumer.ready();
    const channel = await consumer.createChannel(8);
    const messages: string[] = [];
    channel.reader.onMessage((text) => messages.push(text));
    // the writer end itself serialises as its reference
    const answer = consumer.call('sdk::produce', { out: channel.writer, text: 'héllo' });
    const bytes = await channel.reader.readAll();
    expect(await answer).toBe('done');
    expect(messages).toEqual(['{"type":"set_status","status_code":201}']);
    expect(Buffer.from(bytes)).toEqual(Buffer.concat([Buffer.from('héllo', 'utf8'), Buffer.from([0, 255])]));
  });

  it('yields every frame in order to an iterating reader, text frames as strings', async () => {
    const worker = client(engine.busUrl);
    await worker.ready();
    const channel = await worker.createChannel();
    const writing = (async () => {
      await channel.writer.write('one');
      await channel.writer.sendMessage('two');
      await channel.writer.end();
    })();
    const frames: Array<string | number[]> = [];
    for await (const frame of channel.reader) frames.push(typeof frame === 'string' ? frame : [...frame]);
    await writing;
    expect(frames).toEqual([[...Buffer.from('one')], 'two']);
  });

  it('ends the reader cleanly when the writer ends without writing', async () => {
    const worker = client(engine.busUrl);
    await worker.ready();
    const channel = await worker.createChannel();
    await channel.writer.end();
    expect((await channel.reader.readAll()).byteLength).toBe(0);
  });

  it('makes the writer wait while nobody reads (backpressure), then delivers everything', async () => {
    const worker = client(engine.busUrl);
    await worker.ready();
    const channel = await worker.createChannel(1);
    const data = randomBytes(48 * MiB);
    let written = false;
    const writing = channel.writer.write(data).then(() => {
      written = true;
    });
    await sleep(700);
    // the engine holds one frame and pauses the socket; the kernel buffers fill; write() must wait
    expect(written).toBe(false);
    const reading = channel.reader.readAll();
    await writing;
    await channel.writer.end();
    expect(sha256(await reading)).toBe(sha256(data));
  }, 60_000);

  it('fails a read with channel_closed when the reference is stale', async () => {
    const worker = client(engine.busUrl);
    worker.registerFunction('sdk::read', async (input: { reader: ChannelReader }) => {
      try {
        await input.reader.readAll();
        return 'read';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    });
    await worker.ready();
    await functionListed(worker, 'sdk::read');
    const channel = await worker.createChannel();
    expect(await worker.call('sdk::read', { reader: { ...channel.readerRef, access_key: 'wrong-key' } })).toBe('channel_closed');
  });
});
