import type { ServerResponse } from 'node:http';
import type { ChannelFrame, ChannelManager, ChannelSink } from '../../bus/channels.ts';
import { validStatus, writeHead } from './response.ts';

// spec: engine-protocol §2.11 and §6.1 streaming mode. The handler may write its response through
// the `response` channel: text frames `set_status` / `set_headers` come first, binary frames are
// the body, closing the channel ends it. Whichever comes first wins: a handler result, or the
// channel's first body chunk (or its close).

export type ChannelState = 'pending' | 'streaming' | 'done';

export class ResponseChannel implements ChannelSink {
  state: ChannelState = 'pending';
  /** True once any frame (or the close) came through: the handler is using the channel. */
  active = false;
  private status = 200;
  private readonly headers: Record<string, string> = {};
  private waiter?: () => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly channels: ChannelManager,
    readonly channelId: string,
  ) {}

  send(frame: ChannelFrame, written: () => void): void {
    if (this.state === 'done') {
      written();
      return;
    }
    this.active = true;
    if (!frame.binary) {
      if (this.state === 'pending') this.applyControl(frame.data as string);
      else this.wake();
      written();
      return;
    }
    const chunk = frame.data as Buffer;
    if (this.state === 'pending') this.startStreaming();
    // the callback fires once the chunk reached the socket: a slow HTTP client slows the worker down
    if (chunk.length > 0) this.res.write(chunk, () => written());
    else written();
    this.wake();
  }

  close(): void {
    if (this.state === 'done') return;
    this.active = true;
    if (this.state === 'pending') this.startStreaming();
    this.state = 'done';
    this.res.end();
    this.wake();
  }

  /** The response was decided elsewhere (a result, an error): stop listening and free the channel. */
  abandon(): void {
    if (this.state === 'pending') this.state = 'done';
    this.channels.readerGone(this.channelId);
  }

  /** Resolves at the next frame or close (used while waiting after a handler returned nothing). */
  nextActivity(): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  private startStreaming(): void {
    this.state = 'streaming';
    if (!this.res.headersSent) {
      writeHead(this.res, this.status, this.headers);
      this.res.flushHeaders();
    }
  }

  private applyControl(text: string): void {
    let message: { type?: unknown; status_code?: unknown; headers?: unknown };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message?.type === 'set_status') {
      const status = validStatus(message.status_code);
      if (status !== undefined) this.status = status;
    } else if (message?.type === 'set_headers' && message.headers && typeof message.headers === 'object') {
      for (const [name, value] of Object.entries(message.headers as Record<string, unknown>)) {
        if (typeof value === 'string') this.headers[name] = value;
      }
    }
    this.wake();
  }
}
