import type { Channel, ChannelRef, ChannelWriter, EngClient } from '@eng/sdk';
import { pieces, ROUTER_SLACK_BYTES, utf8Bytes } from './answer-cap.ts';
import type { GenerationResult, StreamFrame } from './types.ts';

// The router's second line under a provider's stream (issue 24 item 4): the provider writes into
// a channel only the router reads, and the router forwards each frame to the caller's channel. It
// counts the answer's bytes (a provider worker may ignore max_answer_bytes), splits a long delta
// into bounded frames, and sees that exactly one closing frame ends the stream: the provider's,
// or its own from the result when the provider gave none or was cut off at the cap. It writes the
// `start` frame itself, at once: the caller's channel opens while the provider is being called.

/** After the provider's result, frames still on their way get this long (none seen: a moment). */
const DRAIN_MS = 1000;
const DRAIN_EMPTY_MS = 50;

/** Frames whose string field may be split and sent in pieces (readers append them). */
const SPLITTABLE: Record<string, 'delta' | 'signature'> = {
  text_delta: 'delta',
  thinking_delta: 'delta',
  toolcall_delta: 'delta',
  thinking_signature: 'signature',
};

type Frame = Record<string, unknown> & { type: string };

export class StreamRelay {
  private bytes = 0;
  /** Bytes of each tool call's argument deltas, which its `toolcall_end` repeats. */
  private readonly toolBytes = new Map<unknown, number>();
  private framesSeen = 0;
  /** The caller's stream being closed after the provider's closing frame (set once it arrived). */
  private closing?: Promise<void>;
  private stopped = false;
  private callerGone = false;
  private readonly pumping: Promise<void>;
  private trip!: () => void;
  /** Settles once the answer outgrew the cap: the router stops waiting for the provider. */
  readonly cutOff = new Promise<'cut_off'>((resolve) => {
    this.trip = () => resolve('cut_off');
  });

  private constructor(
    private readonly channel: Channel,
    private readonly caller: ChannelWriter,
    private readonly limit: number,
    /** Called once the caller left or the answer outgrew the cap: cancel the provider's generation. */
    private readonly stopProvider: () => void,
    start: StreamFrame,
  ) {
    this.caller.sendMessage(JSON.stringify(start)).catch(() => this.callerLeft());
    this.pumping = this.pump();
  }

  static async open(
    client: EngClient,
    caller: ChannelWriter,
    start: { provider: string; model: string },
    limit: number,
    stopProvider: () => void,
  ): Promise<StreamRelay> {
    return new StreamRelay(await client.createChannel(1024), caller, limit, stopProvider, { type: 'start', ...start });
  }

  /** The write end the provider is handed. */
  get writerRef(): ChannelRef {
    return this.channel.writerRef;
  }

  /**
   * Stop relaying; a stream the provider did not close gets the closing frame `result` calls for.
   * (The result is what the caller acts on: a provider whose call fails after its `done` frame
   * leaves that frame in the stream.)
   */
  async finish(result: GenerationResult): Promise<void> {
    if (!this.stopped) await within(this.pumping, this.framesSeen ? DRAIN_MS : DRAIN_EMPTY_MS);
    this.stopped = true;
    this.channel.reader.close();
    // a forward in progress finishes before the closing frame goes
    await within(this.pumping, DRAIN_MS);
    if (this.closing) await this.closing;
    else if (!this.callerGone) await endStream(this.caller, result);
  }

  private async pump(): Promise<void> {
    try {
      for await (const raw of this.channel.reader) {
        if (this.stopped) break;
        // the stream is JSON text frames; anything else is not part of it
        if (typeof raw !== 'string') continue;
        const frame = parseFrame(raw);
        if (!frame) continue;
        this.framesSeen++;
        // nothing follows a closing frame
        if (this.closing) continue;
        if (!this.admit(frame, raw)) {
          this.stop();
          this.trip();
          break;
        }
        // the provider's closing frame goes on at once, and the caller's stream starts closing
        // alongside the provider's (each end waits a moment before its close)
        if (frame.type === 'done' || frame.type === 'error') this.closing = this.close(raw);
        else if (frame.type !== 'start') await this.forward(frame, raw);
      }
    } catch {
      // the provider's end closed abnormally (its worker left): the result says what happened
    }
  }

  /** Count a frame against the cap (with the slack for the frames' own small fields). */
  private admit(frame: Frame, raw: string): boolean {
    const field = SPLITTABLE[frame.type];
    const value = field ? frame[field] : undefined;
    let bytes: number;
    if (typeof value === 'string') {
      bytes = utf8Bytes(value);
      if (frame.type === 'toolcall_delta') this.toolBytes.set(frame.index, (this.toolBytes.get(frame.index) ?? 0) + bytes);
    } else if (frame.type === 'toolcall_end') {
      bytes = Math.max(0, utf8Bytes(raw) - (this.toolBytes.get(frame.index) ?? 0));
    } else {
      bytes = utf8Bytes(raw);
    }
    this.bytes += bytes;
    return this.bytes <= this.limit + ROUTER_SLACK_BYTES;
  }

  /** One frame to the caller, a long delta in pieces; awaited, so a slow caller slows the provider. */
  private async forward(frame: Frame, raw: string): Promise<void> {
    const field = SPLITTABLE[frame.type];
    const value = field ? frame[field] : undefined;
    try {
      if (!field || typeof value !== 'string') return await this.caller.sendMessage(raw);
      const parts = pieces(value);
      if (parts.length === 1) return await this.caller.sendMessage(raw);
      for (const part of parts) {
        if (this.stopped) return;
        await this.caller.sendMessage(JSON.stringify({ ...frame, [field]: part }));
      }
    } catch {
      this.callerLeft();
    }
  }

  private async close(raw: string): Promise<void> {
    try {
      await this.caller.sendMessage(raw);
    } catch {
      this.callerLeft();
      return;
    }
    await this.caller.end().catch(() => {});
  }

  /** The caller's channel closed (it stopped reading): nothing more to relay. */
  private callerLeft(): void {
    this.callerGone = true;
    this.stop();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopProvider();
  }
}

/** Close a caller's stream: the closing frame that matches `result`, then the end of the channel. */
export async function endStream(writer: ChannelWriter, result: GenerationResult): Promise<void> {
  await writer.sendMessage(JSON.stringify(closingFrame(result))).catch(() => {});
  await writer.end().catch(() => {});
}

function closingFrame(result: GenerationResult): StreamFrame {
  if (result.ok) {
    const frame: StreamFrame = { type: 'done', stop_reason: result.stop_reason };
    if (result.native_stop_reason) frame.native_stop_reason = result.native_stop_reason;
    if (result.usage) frame.usage = result.usage;
    return frame;
  }
  const frame: StreamFrame = {
    type: 'error',
    stop_reason: result.stop_reason === 'aborted' ? 'aborted' : 'error',
    error_kind: result.error?.kind ?? 'transient',
    message: result.error?.message ?? 'the generation failed',
  };
  if (result.usage) frame.usage = result.usage;
  return frame;
}

function parseFrame(raw: string): Frame | undefined {
  try {
    const frame = JSON.parse(raw) as unknown;
    if (frame && typeof frame === 'object' && typeof (frame as Frame).type === 'string') return frame as Frame;
  } catch {
    // not JSON: dropped
  }
  return undefined;
}

/** Wait for `promise`, at most `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
