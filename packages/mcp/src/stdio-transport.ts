import type { Readable, Writable } from 'node:stream';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { DirectDispatch } from './direct-dispatch.ts';
import {
  batchesAllowed,
  type Classified,
  cancelledRequestId,
  classify,
  type ErrorMessage,
  errorMessage,
  INVALID_REQUEST,
  isRequest,
  isResponse,
  type MessageKind,
  PARSE_ERROR,
} from './jsonrpc.ts';
import { claimsEnvelope } from './modern.ts';

// spec: MCP transports/stdio — newline-delimited JSON-RPC on stdin/stdout. Unlike the SDK's
// StdioServerTransport, a bad line gets its JSON-RPC error (-32700 / -32600) and the server keeps
// serving; batches are answered as batches under 2025-03-26 and refused afterwards (mcp.md §11, §14.1).

/**
 * A line longer than this (in UTF-16 units) is refused without being buffered further. Even in
 * UTF-8 it stays under the engine bus's 64 MiB frame limit, which would otherwise cut our connection.
 */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
/** How long requests still running when stdin closes may take to be answered. */
const DRAIN_MS = 5000;

/** 2026-07-28 requests on stdio (a `_meta` protocol version claim): answered one by one, no session. */
export interface ModernStdio {
  request(message: JSONRPCRequest, write: (message: unknown) => void): void;
  /** A notifications/cancelled for a modern request in flight: true when it was one. */
  cancel(id: RequestId): boolean;
}

interface PendingBatch {
  waiting: Set<RequestId>;
  replies: JSONRPCMessage[];
}

export class StdioTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId?: string;

  private buffer = '';
  private skippingLongLine = false;
  private initializeSeen = false;
  private initializeId?: RequestId;
  private closed = false;
  private readonly batches: PendingBatch[] = [];
  /** Requests handed to the server and not answered yet: stdin closing lets them finish first. */
  private readonly inFlight = new Set<RequestId>();
  private drained?: () => void;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    /** The negotiated protocol version (decides whether batches are allowed). */
    private readonly protocolVersion: () => string | undefined,
    /** Where recognised requests and notifications go without the SDK's schema passes (direct-dispatch.ts). */
    private readonly direct?: DirectDispatch,
    private readonly modern?: ModernStdio,
  ) {}

  async start(): Promise<void> {
    this.input.setEncoding('utf8');
    this.input.on('data', (chunk: string) => this.onData(chunk));
    this.input.on('end', () => void this.finishThenClose());
    this.input.on('error', (err) => this.onerror?.(err));
    this.output.on('error', (err) => {
      // EPIPE: the client went away; nothing more can be said to it
      this.onerror?.(err);
      void this.close();
    });
  }

  private onData(chunk: string): void {
    let text = this.buffer + chunk;
    let newline = text.indexOf('\n');
    while (newline !== -1) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (this.skippingLongLine) this.skippingLongLine = false;
      else this.handleLine(line);
      newline = text.indexOf('\n');
    }
    if (!this.skippingLongLine && text.length > MAX_LINE_CHARS) {
      this.write(errorMessage(null, INVALID_REQUEST, `Invalid Request: message exceeds ${MAX_LINE_CHARS} characters`));
      this.skippingLongLine = true;
      text = '';
    }
    this.buffer = this.skippingLongLine ? '' : text;
  }

  private handleLine(line: string): void {
    const trimmed = line.trim();
    if (trimmed === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(trimmed);
    } catch (err) {
      this.write(errorMessage(null, PARSE_ERROR, `Parse error: ${(err as Error).message}`));
      return;
    }
    if (Array.isArray(raw)) {
      this.handleBatch(raw);
      return;
    }
    const classified = classify(raw);
    if (!classified.ok) {
      this.write(classified.error);
      return;
    }
    if (this.modern) {
      // spec 2026-07-28 basic/transports/stdio: a request claiming the envelope is modern, whatever came before
      if (claimsEnvelope(classified.message) && isRequest(classified.message)) {
        this.modern.request(classified.message, (message) => this.writeRaw(message));
        return;
      }
      const cancelled = cancelledRequestId(classified.message);
      if (cancelled !== undefined && this.modern.cancel(cancelled)) return;
    }
    const refusal = this.gate(classified.message);
    if (refusal) this.write(refusal);
    else this.deliver(classified.message, classified.kind);
  }

  private handleBatch(items: unknown[]): void {
    const version = this.protocolVersion();
    if (!batchesAllowed(version)) {
      const why = version ? `protocol version ${version}` : 'this session before initialize';
      this.write(errorMessage(null, INVALID_REQUEST, `Invalid Request: JSON-RPC batches are not supported in ${why} (only 2025-03-26)`));
      return;
    }
    if (items.length === 0) {
      this.write(errorMessage(null, INVALID_REQUEST, 'Invalid Request: empty batch'));
      return;
    }
    const batch: PendingBatch = { waiting: new Set(), replies: [] };
    const accepted: Array<Classified & { ok: true }> = [];
    for (const item of items) {
      const classified = classify(item);
      if (!classified.ok) {
        batch.replies.push(classified.error as unknown as JSONRPCMessage);
        continue;
      }
      const refusal = this.gate(classified.message);
      if (refusal) {
        batch.replies.push(refusal as unknown as JSONRPCMessage);
        continue;
      }
      if (isRequest(classified.message)) batch.waiting.add(classified.message.id);
      accepted.push(classified);
    }
    if (batch.waiting.size) this.batches.push(batch);
    for (const { message, kind } of accepted) this.deliver(message, kind);
    if (batch.waiting.size === 0 && batch.replies.length) this.writeRaw(batch.replies);
  }

  /** spec basic/lifecycle: nothing but ping before initialize, and initialize only once. */
  private gate(message: JSONRPCMessage): ErrorMessage | undefined {
    if (!isRequest(message)) return undefined;
    if (message.method === 'initialize') {
      if (this.initializeSeen) return errorMessage(message.id, INVALID_REQUEST, 'Invalid Request: Server already initialized');
      this.initializeSeen = true;
      this.initializeId = message.id;
      return undefined;
    }
    if (!this.initializeSeen && message.method !== 'ping') {
      return errorMessage(message.id, INVALID_REQUEST, 'Invalid Request: Server not initialized (send initialize first)');
    }
    return undefined;
  }

  private deliver(message: JSONRPCMessage, kind?: MessageKind): void {
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) this.forget(cancelled);
    if (isRequest(message)) this.inFlight.add(message.id);
    if (this.direct && kind === 'request') this.direct.request(message as JSONRPCRequest);
    else if (this.direct && kind === 'notification') this.direct.notification(message as JSONRPCNotification);
    else this.onmessage?.(message);
  }

  /** spec transports/stdio shutdown: the client closed stdin; answer what was asked (for a while), then close. */
  private async finishThenClose(): Promise<void> {
    if (this.inFlight.size) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAIN_MS);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.close();
  }

  private settled(id: RequestId): void {
    if (this.inFlight.delete(id) && this.inFlight.size === 0) this.drained?.();
  }

  /** A cancelled request gets no response (spec basic/utilities/cancellation), so its batch stops waiting for it. */
  private forget(id: RequestId): void {
    this.settled(id);
    for (const batch of this.batches) {
      if (batch.waiting.delete(id)) this.flushIfDone(batch);
    }
  }

  private flushIfDone(batch: PendingBatch): void {
    if (batch.waiting.size) return;
    this.batches.splice(this.batches.indexOf(batch), 1);
    if (batch.replies.length) this.writeRaw(batch.replies);
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (isResponse(message)) {
      this.settled(message.id);
      // a refused initialize (bad params) may be sent again
      if (message.id === this.initializeId && 'error' in message) this.initializeSeen = false;
      const batch = this.batches.find((b) => b.waiting.has(message.id));
      if (batch) {
        batch.waiting.delete(message.id);
        batch.replies.push(message);
        this.flushIfDone(batch);
        return;
      }
    }
    this.writeRaw(message);
  }

  private write(message: ErrorMessage): void {
    this.writeRaw(message);
  }

  private writeRaw(value: unknown): void {
    if (this.closed) return;
    this.output.write(`${JSON.stringify(value)}\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.pause();
    this.onclose?.();
  }
}
