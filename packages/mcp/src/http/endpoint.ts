import { randomUUID } from 'node:crypto';
import type { ChannelWriter, EngClient } from '@eng/sdk';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { directDispatch } from '../direct-dispatch.ts';
import { batchesAllowed, classify, errorMessage, INVALID_REQUEST, isRequest, PARSE_ERROR, readableId } from '../jsonrpc.ts';
import type { Log } from '../log.ts';
import { claimsEnvelope, isModernVersion } from '../modern.ts';
import { SUPPORTED_VERSIONS } from '../server.ts';
import type { McpSession, SessionHub } from '../sessions.ts';
import type { ModernHttp } from './modern-http.ts';
import { checkOrigin } from './origin.ts';
import { type HttpReply, HttpSessionTransport, jsonReply } from './session-transport.ts';

// spec: MCP transports/streamable-http (2025-03-26 → 2025-11-25), seed §4.3 — `/mcp` on the engine
// HTTP port, served by one engine function bound to POST, GET and DELETE http triggers
// (mcp.md §12: the reference answered POST only, always 200, with no sessions or checks).

export const HTTP_FUNCTION_ID = 'mcp::http';
export const MCP_PATH = 'mcp';
/**
 * What one initialized HTTP session costs besides what its client sent: measured ~9 KiB of heap and
 * ~16 KiB of RSS per session (3000 sessions in one process, the SDK's Ajv instance shared).
 */
export const SESSION_BASE_BYTES = 16 * 1024;
/** The client's initialize params stay referenced by the SDK; as objects they take more than their JSON. */
const RETAINED_FACTOR = 2;
const REFUSAL_LOG_EVERY_MS = 60_000;

/** What eng-http hands the function (engine-protocol §5.2); channel ends are live SDK objects. */
interface HttpInput {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  response?: ChannelWriter;
}

interface Entry {
  session: McpSession;
  transport: HttpSessionTransport;
  /** Fixed part of the memory estimate (base + initialize params); subscriptions are added live. */
  bytes: number;
}

export interface EndpointOptions {
  allowedOrigins: string[];
  allowedHosts: string[];
  maxBodyBytes: number;
  sseAfterMs: number;
  maxSessions: number;
  maxSessionBytes: number;
  sessionIdleMs: number;
  sessionProtectMs: number;
  /** What one session's SSE events kept for resumption may take. */
  replayBytes: number;
}

/** How long a client waits before it reconnects to a stream (the `retry` of priming events). */
export const STREAM_RETRY_MS = 1000;

const SESSION_HEADER = 'mcp-session-id';
/** A JSON-RPC error answer; `id` is the request's when it could be read (null otherwise). */
const error = (status: number, code: number, message: string, headers?: Record<string, string>, id: string | number | null = null) =>
  jsonReply(status, errorMessage(id, code, message), headers);

/** `application/json` (with parameters) as a parsed media type, not a substring. */
export function isJsonType(value: string | undefined): boolean {
  return (value ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

export function accepts(header: string | undefined): { json: boolean; sse: boolean } {
  if (!header) return { json: true, sse: false };
  const types = header.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase() ?? '');
  const any = types.includes('*/*');
  return {
    json: any || types.includes('application/json') || types.includes('application/*'),
    sse: any || types.includes('text/event-stream') || types.includes('text/*'),
  };
}

/** JSON size of a value; one nested too deeply to serialise counts as unbounded (it cannot be kept). */
function jsonLength(value: unknown): number {
  try {
    return (JSON.stringify(value) ?? '').length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

export class HttpEndpoint {
  /** Least recently active first: a request moves its session to the end (eviction and expiry scan from the front). */
  private readonly entries = new Map<string, Entry>();
  /** Sum of the entries' fixed `bytes`. */
  private fixedBytes = 0;
  private sweeper?: NodeJS.Timeout;
  private refused = { count: 0, loggedAt: Number.NEGATIVE_INFINITY };

  constructor(
    private readonly client: EngClient,
    private readonly hub: SessionHub,
    private readonly createSession: (id: string) => McpSession,
    private readonly options: EndpointOptions,
    private readonly log: Log,
    /** 2026-07-28 requests (stateless), told apart from 2025 ones request by request. */
    private readonly modern?: ModernHttp,
    /** The path under the engine's HTTP port (`mcp`), and the function bound to it. */
    private readonly path: string = MCP_PATH,
  ) {}

  get functionId(): string {
    return this.path === MCP_PATH ? HTTP_FUNCTION_ID : `${HTTP_FUNCTION_ID}::${this.path.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  }

  /** Register `mcp::http` and its three routes on the engine's http trigger type. */
  register(): void {
    this.client.registerFunction(this.functionId, (input, ctx) => this.handle(input as HttpInput, ctx.signal), {
      description: `MCP Streamable HTTP endpoint of eng-mcp (POST, GET and DELETE /${this.path})`,
    });
    for (const method of ['POST', 'GET', 'DELETE']) {
      this.client.registerTrigger({ type: 'http', function_id: this.functionId, config: { api_path: this.path, http_method: method } });
    }
    // often enough that an idle session never outlives its expiry by more than a quarter of it
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(250, Math.floor(this.options.sessionIdleMs / 4))));
    this.sweeper.unref();
  }

  get sessionCount(): number {
    return this.entries.size;
  }

  /** `gone` aborts when the HTTP client hangs up before its answer (the engine cancels this call). */
  async handle(input: HttpInput, gone?: AbortSignal): Promise<HttpReply | null> {
    const headers = input.headers ?? {};
    const refusal = checkOrigin(headers, this.options);
    if (refusal) {
      this.log.warn(`refused ${input.method ?? '?'} /mcp: ${refusal}`);
      return error(403, -32000, `Forbidden: ${refusal}`, undefined, readableId(input.body));
    }
    const version = headers['mcp-protocol-version'];
    const verb = (input.method ?? '').toUpperCase();
    // spec 2026-07-28 versioning: the body's _meta decides the revision; the header cross-checks it
    if (this.modern && verb === 'POST' && (claimsEnvelope(input.body) || isModernVersion(version))) {
      const early = this.postChecks(input, headers);
      if (early) return early;
      const accept = accepts(headers.accept);
      return this.modern.post(input, headers, accept.sse, gone);
    }
    if (version !== undefined && !(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
      return jsonReply(
        400,
        errorMessage(
          readableId(input.body),
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_VERSIONS.join(', ')}${this.modern ? ', and 2026-07-28 with _meta on every request' : ''})`,
        ),
      );
    }
    switch (verb) {
      case 'POST':
        return this.post(input, headers);
      case 'GET':
        return this.get(input, headers);
      case 'DELETE':
        return this.delete(headers);
      default:
        return {
          status_code: 405,
          headers: { allow: 'GET, POST, DELETE', 'content-type': 'application/json' },
          body: JSON.stringify(errorMessage(null, -32000, 'Method not allowed.')),
        };
    }
  }

  /** 400 without the header, 404 for an unknown, ended or expired session. */
  private lookup(headers: Record<string, string>, requestId: string | number | null = null): Entry | HttpReply {
    const id = headers[SESSION_HEADER];
    if (!id) return error(400, -32000, 'Bad Request: Mcp-Session-Id header is required', undefined, requestId);
    const entry = this.entries.get(id);
    if (!entry) return error(404, -32001, 'Session not found', undefined, requestId);
    const now = Date.now();
    if (this.expired(entry, now)) {
      // the sweeper may not have come by yet: an expired session is gone all the same
      void this.close(entry);
      return error(404, -32001, 'Session not found', undefined, requestId);
    }
    entry.session.lastActiveMs = now;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  private expired(entry: Entry, now: number): boolean {
    return now - entry.session.lastActiveMs >= this.options.sessionIdleMs && !entry.transport.hasStandaloneStream;
  }

  /** What every POST must pass, either revision: Accept, Content-Type, size. */
  private postChecks(input: HttpInput, headers: Record<string, string>): HttpReply | undefined {
    const accept = accepts(headers.accept);
    const id = readableId(input.body);
    if (!accept.json && !accept.sse) {
      return jsonReply(406, errorMessage(id, -32000, 'Not Acceptable: Client must accept application/json or text/event-stream'));
    }
    if (!isJsonType(headers['content-type'])) {
      return jsonReply(415, errorMessage(id, -32000, 'Unsupported Media Type: Content-Type must be application/json'));
    }
    const declared = Number(headers['content-length']);
    const size =
      Number.isFinite(declared) && headers['content-length'] !== undefined ? declared : (JSON.stringify(input.body) ?? '').length;
    if (size > this.options.maxBodyBytes) {
      return jsonReply(413, errorMessage(id, -32000, `Payload Too Large: the body exceeds ${this.options.maxBodyBytes} bytes`));
    }
    return undefined;
  }

  private async post(input: HttpInput, headers: Record<string, string>): Promise<HttpReply | null> {
    const accept = accepts(headers.accept);
    const refused = this.postChecks(input, headers);
    if (refused) return refused;
    // eng-http parses application/json bodies; invalid (or empty) JSON arrives as null
    const body = input.body;
    if (body === null || body === undefined) return error(400, PARSE_ERROR, 'Parse error: Invalid JSON');

    const batch = Array.isArray(body);
    const items = batch ? (body as unknown[]) : [body];
    const messages: JSONRPCMessage[] = [];
    const early: JSONRPCMessage[] = [];
    for (const item of items) {
      const classified = classify(item);
      if (classified.ok) messages.push(classified.message);
      else if (batch) early.push(classified.error as unknown as JSONRPCMessage);
      else return jsonReply(400, classified.error);
    }
    if (batch && items.length === 0) return error(400, INVALID_REQUEST, 'Invalid Request: empty batch');

    const initialize = messages.find((m) => isRequest(m) && m.method === 'initialize');
    let entry: Entry;
    let created = false;
    if (initialize) {
      if (headers[SESSION_HEADER]) {
        return jsonReply(
          400,
          errorMessage((initialize as { id: string | number }).id, INVALID_REQUEST, 'Invalid Request: Server already initialized'),
        );
      }
      if (batch) return error(400, INVALID_REQUEST, 'Invalid Request: initialize must not be part of a batch');
      const bytes = SESSION_BASE_BYTES + RETAINED_FACTOR * jsonLength((initialize as { params?: unknown }).params);
      const refusal = this.makeRoom(bytes, (initialize as { id: string | number }).id);
      if (refusal) return refusal;
      entry = await this.open(bytes);
      created = true;
    } else {
      const found = this.lookup(headers, batch ? null : readableId(body));
      if (!('session' in found)) return found;
      entry = found;
      if (batch && !batchesAllowed(entry.session.protocolVersion)) {
        return error(
          400,
          INVALID_REQUEST,
          `Invalid Request: JSON-RPC batches are not supported in protocol version ${entry.session.protocolVersion}`,
        );
      }
    }
    // progress notifications need a stream; otherwise JSON, which costs no channel (mcp.md §15)
    const wantsProgress = messages.some(
      (m) => isRequest(m) && (m.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken !== undefined,
    );
    const sse = accept.sse && (!accept.json || wantsProgress) && input.response !== undefined;
    const reply = await entry.transport.post(
      messages,
      {
        batch,
        sse,
        canStream: accept.sse && input.response !== undefined,
        streamAfterMs: this.options.sseAfterMs,
        writer: input.response as ChannelWriter,
        headers: { [SESSION_HEADER]: entry.session.id },
      },
      early,
    );
    if (created && !entry.session.initialized) {
      // a failed initialize leaves no session behind, and names none
      await this.close(entry);
      if (reply) delete reply.headers[SESSION_HEADER];
    }
    return reply;
  }

  private async get(input: HttpInput, headers: Record<string, string>): Promise<HttpReply | null> {
    if (!accepts(headers.accept).sse || !headers.accept) {
      return error(406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    }
    const found = this.lookup(headers);
    if (!('session' in found)) return found;
    // an engine without response channels (iii 0.11) cannot stream: spec streamable-http allows 405 for GET
    if (!input.response) return error(405, -32000, 'Method not allowed: this engine cannot stream responses');
    const lastEventId = headers['last-event-id'];
    if (lastEventId !== undefined && lastEventId !== '') {
      // spec streamable-http §resumability: the stream that broke, from the event after this one
      const outcome = await found.transport.resume(lastEventId, input.response, { [SESSION_HEADER]: found.session.id });
      if (outcome === 'resumed') return null;
      return error(
        404,
        -32000,
        outcome === 'ended'
          ? `Not Found: the stream of event ${lastEventId} has ended and everything on it was sent`
          : `Not Found: no stream of this session holds event ${lastEventId} (its events were dropped, or it never existed)`,
      );
    }
    if (found.transport.hasStandaloneStream) return error(409, -32000, 'Conflict: Only one SSE stream is allowed per session');
    await found.transport.openStandalone(input.response, { [SESSION_HEADER]: found.session.id });
    return null;
  }

  private async delete(headers: Record<string, string>): Promise<HttpReply> {
    const found = this.lookup(headers);
    if (!('session' in found)) return found;
    await this.close(found);
    return { status_code: 200, headers: { 'content-type': 'application/json' }, body: null };
  }

  /**
   * Room for a session of `bytes` within both caps, made by evicting the least recently active
   * sessions idle longer than `sessionProtectMs` (those without a GET stream first); a session
   * active more recently is never evicted, so when that is not enough the initialize is refused:
   * 503 with Retry-After (when the oldest session becomes evictable) and a JSON-RPC error body.
   */
  private makeRoom(bytes: number, requestId: string | number): HttpReply | undefined {
    const { maxSessions, maxSessionBytes, sessionProtectMs } = this.options;
    if (bytes > maxSessionBytes) {
      return jsonReply(
        413,
        errorMessage(
          requestId,
          -32000,
          Number.isFinite(bytes)
            ? `Payload Too Large: this initialize would hold ~${bytes} bytes, over the session memory budget (${maxSessionBytes})`
            : 'Payload Too Large: the initialize params are nested too deeply to keep',
        ),
      );
    }
    let used = this.fixedBytes;
    for (const entry of this.entries.values()) used += entry.session.subscriptionBytes + entry.transport.replayBytes;
    const fits = () => this.entries.size < maxSessions && used + bytes <= maxSessionBytes;
    if (fits()) return undefined;
    const now = Date.now();
    for (const withStream of [false, true]) {
      for (const entry of this.entries.values()) {
        if (fits()) break;
        if (now - entry.session.lastActiveMs < sessionProtectMs) break; // LRU order: the rest are newer still
        if (entry.transport.hasStandaloneStream !== withStream) continue;
        used -= entry.bytes + entry.session.subscriptionBytes + entry.transport.replayBytes;
        this.log.debug(`evicting MCP session ${entry.session.id} (idle ${now - entry.session.lastActiveMs} ms) to make room`);
        void this.close(entry);
      }
    }
    if (fits()) return undefined;
    const oldest = this.entries.values().next().value as Entry | undefined;
    const waitMs = oldest ? oldest.session.lastActiveMs + sessionProtectMs - now : 1000;
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    this.noteRefusal(retryAfter);
    const used_ = `${this.entries.size}/${maxSessions} sessions, ~${Math.ceil(used / 1024)}/${Math.floor(maxSessionBytes / 1024)} KiB`;
    return jsonReply(
      503,
      errorMessage(requestId, -32000, `Service Unavailable: the MCP session limit is reached (${used_}); retry in ${retryAfter} s`),
      { 'retry-after': String(retryAfter) },
    );
  }

  /** One warning per minute at most under a flood, with the count since the last one. */
  private noteRefusal(retryAfter: number): void {
    this.refused.count++;
    const now = Date.now();
    if (now - this.refused.loggedAt < REFUSAL_LOG_EVERY_MS) return;
    this.log.warn(
      `refused ${this.refused.count} MCP initialize request(s): session limit reached (max ${this.options.maxSessions} sessions, ` +
        `${this.options.maxSessionBytes} bytes; none idle for ${this.options.sessionProtectMs} ms); Retry-After ${retryAfter} s`,
    );
    this.refused = { count: 0, loggedAt: now };
  }

  private async open(bytes: number): Promise<Entry> {
    const id = randomUUID();
    const session = this.createSession(id);
    const transport = new HttpSessionTransport(id, {
      replayBytes: this.options.replayBytes,
      retryMs: STREAM_RETRY_MS,
      // SEP-1699 priming events: for clients of 2025-11-25 and later (older ones may not expect empty events)
      priming: () => (session.protocolVersion ?? '') >= '2025-11-25',
      direct: directDispatch(session.server),
    });
    session.releaseStream = (requestId, retryMs) => transport.release(requestId, retryMs);
    // counted before the first await, so concurrent initializes cannot overshoot the caps
    const entry: Entry = { session, transport, bytes };
    this.entries.set(id, entry);
    this.fixedBytes += bytes;
    this.hub.add(session);
    try {
      await session.server.connect(transport);
    } catch (err) {
      await this.close(entry);
      throw err;
    }
    return entry;
  }

  private async close(entry: Entry): Promise<void> {
    if (!this.entries.delete(entry.session.id)) return;
    this.fixedBytes -= entry.bytes;
    this.hub.remove(entry.session);
    await entry.session.server.close().catch(() => undefined);
  }

  /** Sessions idle for `sessionIdleMs` without a GET stream are ended; their clients re-initialize on the 404. */
  private sweep(): void {
    const now = Date.now();
    for (const entry of [...this.entries.values()]) {
      if (now - entry.session.lastActiveMs < this.options.sessionIdleMs) break; // LRU order
      if (this.expired(entry, now)) void this.close(entry);
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.values()].map((entry) => this.close(entry)));
  }
}
