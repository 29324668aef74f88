import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// The common part of the fake model APIs: an HTTP server on a loopback port that records every
// request and answers from per-test scripts. Only the hosted APIs are faked; everything else in the
// tests is real.

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** One SSE event: `event:` line (Anthropic) optional, `data:` either JSON or a raw string. */
export interface SseEvent {
  event?: string;
  data: unknown;
  /** Send `data` as is (malformed data, `[DONE]`). */
  raw?: boolean;
}

export type Reply =
  | { kind: 'sse'; events: SseEvent[]; delayMs?: number; firstByteDelayMs?: number; stallAfter?: number; headers?: Record<string, string> }
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> };

export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Reply[] = [];
  /** Answers generation requests when no script is queued. */
  fallback?: (request: RecordedRequest) => Reply;
  private server!: Server;
  port = 0;
  /** Streams currently open (a stalled stream stays here until the client leaves). */
  openStreams = 0;
  /** Streams whose client went away before the end. */
  abandonedStreams = 0;
  /** performance.now() marks of every stream: request arrived, first byte and end sent (benchmarks). */
  readonly streamTimings: Array<{ arrived: number; firstByte: number; end: number; events: number }> = [];

  constructor(private readonly route: (api: FakeApi, request: RecordedRequest) => Reply | undefined) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  enqueue(...replies: Reply[]): void {
    this.queue.push(...replies);
  }

  /** The next scripted reply for a generation request. */
  next(request: RecordedRequest): Reply {
    const scripted = this.queue.shift();
    if (scripted) return scripted;
    if (this.fallback) return this.fallback(request);
    return { kind: 'json', status: 500, body: { error: { message: 'the fake has no script for this request' } } };
  }

  generationRequests(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.endsWith(path));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // kept as text
    }
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] as string,
      headers: req.headers,
      body,
    };
    this.requests.push(request);
    const reply = this.route(this, request) ?? { kind: 'json', status: 404, body: { error: { message: `no route ${request.path}` } } };
    if (reply.kind === 'json') {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
      return;
    }
    await this.stream(reply, res, arrived);
  }

  private async stream(reply: Extract<Reply, { kind: 'sse' }>, res: ServerResponse, arrived: number): Promise<void> {
    let gone = false;
    res.on('close', () => {
      if (!res.writableFinished) gone = true;
    });
    this.openStreams++;
    try {
      if (reply.firstByteDelayMs) await sleep(reply.firstByteDelayMs);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...reply.headers });
      let firstByte = 0;
      let sent = 0;
      for (const event of reply.events) {
        if (gone) break;
        if (reply.stallAfter !== undefined && sent >= reply.stallAfter) {
          // a stalled stream: hold it open until the client gives up
          while (!gone) await sleep(10);
          break;
        }
        const data = event.raw ? String(event.data) : JSON.stringify(event.data);
        res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
        if (sent === 0) firstByte = performance.now();
        sent++;
        if (reply.delayMs) await sleep(reply.delayMs);
      }
      if (gone) this.abandonedStreams++;
      else {
        res.end();
        this.streamTimings.push({ arrived, firstByte, end: performance.now(), events: sent });
        if (this.streamTimings.length > 10_000) this.streamTimings.shift();
      }
    } finally {
      this.openStreams--;
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Split text into token-sized pieces (a word and its following space), as a model streams them. */
export function tokens(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
