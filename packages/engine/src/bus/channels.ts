import type { ChannelRef } from '@eng/protocol';
import { newAccessKey, newUuid } from '../core/ids.ts';
import type { Logger } from '../log.ts';

// spec: engine-protocol §2.11 — byte/text channels between two parties, relayed frame by frame.

export interface ChannelFrame {
  data: Buffer | string;
  binary: boolean;
}

/** Where a channel delivers its frames: a WebSocket or an in-process consumer. */
export interface ChannelSink {
  /** Deliver a frame; call `written` once it has left the process (drives reader-side backpressure). */
  send(frame: ChannelFrame, written: () => void): void;
  close(code?: number, reason?: string): void;
}

/** The writing side, so the channel can pause it while its buffer is full. */
export interface ChannelSource {
  pause(): void;
  resume(): void;
  close(code?: number, reason?: string): void;
}

interface Channel {
  id: string;
  key: string;
  bufferSize: number;
  ownerWorkerId: string | null;
  createdAtMs: number;
  queue: ChannelFrame[];
  reader?: ChannelSink;
  writer?: ChannelSource;
  readerTaken: boolean;
  writerTaken: boolean;
  writerClosed: boolean;
  /** Close code for the reader once the queue drains: 1000, or 1011 when the writer vanished mid-stream. */
  endCode: number;
  endReason: string;
  readerClosed: boolean;
  paused: boolean;
  /** Bytes handed to the reader's socket and not yet written out. */
  inFlightBytes: number;
}

/** Stop handing frames to a reader whose socket holds this much unwritten data. */
const READER_HIGH_WATER_BYTES = 4 * 1024 * 1024;

const SWEEP_AFTER_MS = 5 * 60_000;

export class ChannelManager {
  private readonly channels = new Map<string, Channel>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly log: Logger) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  create(bufferSize = 64, ownerWorkerId: string | null = null): { writer: ChannelRef; reader: ChannelRef } {
    const size = Math.min(1024, Math.max(1, Math.floor(bufferSize)));
    const channel: Channel = {
      id: newUuid(),
      key: newAccessKey(),
      bufferSize: size,
      ownerWorkerId,
      createdAtMs: Date.now(),
      queue: [],
      readerTaken: false,
      writerTaken: false,
      writerClosed: false,
      endCode: 1000,
      endReason: 'writer closed',
      readerClosed: false,
      paused: false,
      inFlightBytes: 0,
    };
    this.channels.set(channel.id, channel);
    return {
      writer: { channel_id: channel.id, access_key: channel.key, direction: 'write' },
      reader: { channel_id: channel.id, access_key: channel.key, direction: 'read' },
    };
  }

  /**
   * A channel whose writing side is already done: `frames` are all it will ever carry (an HTTP
   * request body, read before the handler runs). Same as create + attachWriter + push… + end,
   * without a writer object per channel.
   */
  createFilled(frames: ChannelFrame[], bufferSize = 64): { writer: ChannelRef; reader: ChannelRef } {
    const refs = this.create(bufferSize);
    const channel = this.channels.get(refs.reader.channel_id) as Channel;
    channel.queue = frames;
    channel.writerTaken = true;
    channel.writerClosed = true;
    return refs;
  }

  /** True when the id and key name a channel (checked before the WebSocket upgrade). */
  check(id: string, key: string | null): boolean {
    const channel = this.channels.get(id);
    return !!channel && key !== null && channel.key === key;
  }

  get size(): number {
    return this.channels.size;
  }

  /** Attach the reading end. Returns false when that end was already taken. */
  attachReader(id: string, key: string, sink: ChannelSink): boolean {
    const channel = this.channels.get(id);
    if (!channel || channel.key !== key || channel.readerTaken) return false;
    channel.readerTaken = true;
    channel.reader = sink;
    this.flush(channel);
    return true;
  }

  /** Attach the writing end. Returns a function to call for each frame and one for the end. */
  attachWriter(
    id: string,
    key: string,
    source: ChannelSource,
  ): { push(frame: ChannelFrame): void; end(abnormal?: boolean): void } | undefined {
    const channel = this.channels.get(id);
    if (!channel || channel.key !== key || channel.writerTaken) return undefined;
    channel.writerTaken = true;
    channel.writer = source;
    return {
      push: (frame) => {
        if (channel.readerClosed) return;
        channel.queue.push(frame);
        this.flush(channel);
        if (channel.queue.length >= channel.bufferSize && !channel.paused) {
          channel.paused = true;
          source.pause();
        }
      },
      end: (abnormal = false) => {
        channel.writerClosed = true;
        if (abnormal) {
          // the reader must not mistake a writer that died mid-stream for a complete stream
          channel.endCode = 1011;
          channel.endReason = 'writer disconnected before closing the channel';
        }
        this.flush(channel);
      },
    };
  }

  /** The reading end went away: the writer has nobody to talk to any more. */
  readerGone(id: string): void {
    const channel = this.channels.get(id);
    if (!channel) return;
    channel.readerClosed = true;
    channel.queue.length = 0;
    if (!channel.writerClosed) channel.writer?.close(1000, 'reader closed');
    this.channels.delete(id);
  }

  /** Remove channels owned by a worker that disconnected (§2.8 step 5). */
  removeOwnedBy(workerId: string): void {
    for (const channel of this.channels.values()) {
      if (channel.ownerWorkerId === workerId) this.destroy(channel, 'owner disconnected');
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const channel of this.channels.values()) this.destroy(channel, 'engine shutting down');
  }

  private flush(channel: Channel): void {
    const reader = channel.reader;
    if (!reader) return;
    while (channel.queue.length > 0 && channel.inFlightBytes < READER_HIGH_WATER_BYTES) {
      const frame = channel.queue.shift() as ChannelFrame;
      const size = typeof frame.data === 'string' ? Buffer.byteLength(frame.data) : frame.data.length;
      channel.inFlightBytes += size;
      try {
        reader.send(frame, () => {
          channel.inFlightBytes -= size;
          if (channel.queue.length > 0 || channel.writerClosed) this.flush(channel);
        });
      } catch (err) {
        channel.inFlightBytes -= size;
        this.log.debug(`channel ${channel.id}: reader send failed`, { error: (err as Error).message });
      }
    }
    if (channel.paused && channel.queue.length < channel.bufferSize) {
      channel.paused = false;
      channel.writer?.resume();
    }
    if (channel.writerClosed && channel.queue.length === 0 && this.channels.has(channel.id)) {
      reader.close(channel.endCode, channel.endReason);
      this.channels.delete(channel.id);
    }
  }

  private destroy(channel: Channel, reason: string): void {
    channel.reader?.close(1001, reason);
    channel.writer?.close(1001, reason);
    this.channels.delete(channel.id);
  }

  private sweep(): void {
    const cutoff = Date.now() - SWEEP_AFTER_MS;
    for (const channel of this.channels.values()) {
      const connected = channel.readerTaken && channel.writerTaken;
      if (!connected && channel.createdAtMs < cutoff) {
        this.log.debug(`channel ${channel.id} swept: never fully connected`);
        this.destroy(channel, 'channel expired');
      }
    }
  }
}
