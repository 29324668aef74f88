import type { ChannelRef } from '@eng/protocol';
import WebSocket from 'ws';
import type { ChannelFrame, ChannelManager, ChannelSink } from '../../bus/channels.ts';
import type { InvokeOutcome } from '../../core/invoker.ts';

// A call from another engine may carry channel refs (spec §2.11) of THAT engine: an HTTP request's
// `request_body` and `response`, or channels a worker created there. A worker here opens channels
// on its own engine, so each ref is replaced by a channel of this engine whose other end this
// engine relays to the caller's engine over its bus (`/ws/channels/<id>`), frame by frame, with
// backpressure. The relay's socket opens on the first frame (a response channel the handler never
// uses costs no connection); a readable channel is fetched at once, except an HTTP request's body
// when the request had none.

const isRef = (v: unknown): v is ChannelRef =>
  v !== null &&
  typeof v === 'object' &&
  typeof (v as ChannelRef).channel_id === 'string' &&
  typeof (v as ChannelRef).access_key === 'string' &&
  ((v as ChannelRef).direction === 'read' || (v as ChannelRef).direction === 'write');

function channelUrl(busUrl: string, ref: ChannelRef): string {
  return `${busUrl.replace(/\/$/, '')}/ws/channels/${encodeURIComponent(ref.channel_id)}?key=${encodeURIComponent(ref.access_key)}&dir=${ref.direction}`;
}

/** Whether an HTTP trigger's payload announces a body (else its `request_body` is empty: not fetched). */
function httpWithoutBody(data: Record<string, unknown>): boolean {
  const trigger = data.trigger as { type?: unknown } | undefined;
  if (trigger?.type !== 'http') return false;
  const headers = (data.headers ?? {}) as Record<string, unknown>;
  const length = Number(headers['content-length'] ?? 0);
  return !(length > 0) && headers['transfer-encoding'] === undefined;
}

/** The local reader of a channel the worker writes: its frames go to the caller engine's channel. */
class RelayOut implements ChannelSink {
  used = false;
  private ws?: WebSocket;
  private open = false;
  private failed = false;
  private readonly waiting: Array<{ frame: ChannelFrame; written: () => void }> = [];
  private closeCode?: number;

  constructor(private readonly url: string) {}

  send(frame: ChannelFrame, written: () => void): void {
    this.used = true;
    if (this.failed) {
      written();
      return;
    }
    this.connect();
    if (!this.open) {
      this.waiting.push({ frame, written });
      return;
    }
    (this.ws as WebSocket).send(frame.data, { binary: frame.binary }, () => written());
  }

  close(code = 1000): void {
    this.used = true;
    this.closeCode = code === 1000 || code === 1011 ? code : 1000;
    if (this.failed) return;
    this.connect();
    if (this.open) (this.ws as WebSocket).close(this.closeCode);
  }

  private connect(): void {
    if (this.ws) return;
    const ws = new WebSocket(this.url, { perMessageDeflate: false });
    this.ws = ws;
    ws.on('open', () => {
      this.open = true;
      for (const { frame, written } of this.waiting.splice(0)) ws.send(frame.data, { binary: frame.binary }, () => written());
      if (this.closeCode !== undefined) ws.close(this.closeCode);
    });
    const fail = () => {
      this.failed = true;
      for (const { written } of this.waiting.splice(0)) written();
    };
    ws.on('error', fail);
    ws.on('unexpected-response', fail);
    ws.on('close', fail);
  }
}

/**
 * Bridge the channel refs at the top of `data` (in place). Returns what to do once the call ended:
 * a call answered with a result frees the channels its handler left untouched.
 */
export function bridgeChannels(
  channels: ChannelManager,
  data: unknown,
  callerBusUrl: string,
): ((outcome: InvokeOutcome) => void) | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const record = data as Record<string, unknown>;
  const cleanups: Array<() => void> = [];
  for (const key of Object.keys(record)) {
    const ref = record[key];
    if (!isRef(ref)) continue;
    const local = channels.create(64);
    if (ref.direction === 'write') {
      // the worker writes here; the frames go to the caller engine's channel
      const relay = new RelayOut(channelUrl(callerBusUrl, ref));
      channels.attachReader(local.reader.channel_id, local.reader.access_key, relay);
      record[key] = local.writer;
      cleanups.push(() => {
        if (!relay.used) channels.readerGone(local.reader.channel_id);
      });
      continue;
    }
    cleanups.push(() => channels.readerGone(local.reader.channel_id));
    // the worker reads here; the frames come from the caller engine's channel
    record[key] = local.reader;
    if (key === 'request_body' && httpWithoutBody(record)) {
      const writer = channels.attachWriter(local.writer.channel_id, local.writer.access_key, { pause() {}, resume() {}, close() {} });
      writer?.end();
      continue;
    }
    const ws = new WebSocket(channelUrl(callerBusUrl, ref), { perMessageDeflate: false });
    const writer = channels.attachWriter(local.writer.channel_id, local.writer.access_key, {
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      close: () => ws.close(),
    });
    let ended = false;
    const end = (abnormal: boolean) => {
      if (ended) return;
      ended = true;
      writer?.end(abnormal);
    };
    ws.on('message', (payload: Buffer, binary: boolean) => writer?.push({ data: binary ? payload : payload.toString(), binary }));
    ws.on('close', (code: number) => end(code !== 1000));
    ws.on('error', () => end(true));
    ws.on('unexpected-response', () => end(true));
  }
  if (cleanups.length === 0) return undefined;
  return (outcome) => {
    // a result (or an error) answered the call, as the HTTP module reads it: channels the handler
    // never wrote are freed (no result, or null, leaves the response to the channel)
    const answered = outcome.ok
      ? outcome.resultJson !== undefined
        ? outcome.resultJson !== 'null'
        : outcome.result !== undefined && outcome.result !== null
      : true;
    if (answered) for (const cleanup of cleanups) cleanup();
  };
}
