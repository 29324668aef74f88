import type { ChannelWriter } from '@eng/sdk';
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { classify, errorMessage, INVALID_REQUEST, isResponse, PARSE_ERROR, readableId } from '../jsonrpc.ts';
import { Leg } from '../leg.ts';
import {
  claimedVersion,
  HEADER_MISMATCH,
  listenRefusal,
  MODERN_METHODS,
  type ModernIo,
  type ModernServer,
  mcpNameOf,
  type Refusal,
  readEnvelope,
  responseOf,
} from '../modern.ts';
import { type HttpReply, jsonReply } from './session-transport.ts';
import { SseStream } from './sse-stream.ts';

// spec 2026-07-28 basic/transports/streamable-http — one POST, one request, answered on its own:
// JSON, or SSE once a message related to the request (progress, a log line, a subscription
// notification) comes before the answer or the answer takes longer than `sse_after_ms`. No session,
// no GET, no event ids (resumability is gone from this revision: a broken stream is a cancelled request).
// The request metadata headers (SEP-2243) are checked against the body before anything runs.

export interface ModernHttpOptions {
  maxBodyBytes: number;
  sseAfterMs: number;
}

interface PostInput {
  body?: unknown;
  response?: ChannelWriter;
}

const refuse = (id: unknown, refusal: Refusal): HttpReply => {
  const message = errorMessage(readableId({ id }), refusal.code, refusal.message) as unknown as { error: Record<string, unknown> };
  if (refusal.data !== undefined) message.error.data = refusal.data;
  return jsonReply(refusal.status, message);
};

const mismatch = (message: string, header: string, body: unknown): Refusal => ({
  status: 400,
  code: HEADER_MISMATCH,
  message: `Bad Request: ${message}`,
  data: { mismatch: { header, body } },
});

/** SEP-2243 Base64 sentinel: `=?base64?<b64>?=` carries UTF-8 that is not header-safe. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith('=?base64?') && value.endsWith('?='))) return value;
  const b64 = value.slice(9, -2);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/** `Mcp-Method`, `Mcp-Name` and the protocol version header against the body (400 / -32020 when they disagree). */
export function checkStandardHeaders(message: JSONRPCRequest, version: string, headers: Record<string, string>): Refusal | undefined {
  const headerVersion = headers['mcp-protocol-version'];
  if (headerVersion === undefined) return mismatch('the MCP-Protocol-Version header is required', 'MCP-Protocol-Version', version);
  if (headerVersion !== version) {
    return mismatch(`the MCP-Protocol-Version header (${headerVersion}) and _meta (${version}) disagree`, 'MCP-Protocol-Version', version);
  }
  const method = headers['mcp-method'];
  if (method === undefined) return mismatch('the Mcp-Method header is required', 'Mcp-Method', message.method);
  if (method !== message.method) {
    return mismatch(`the Mcp-Method header (${method}) and the body method (${message.method}) disagree`, 'Mcp-Method', message.method);
  }
  const name = mcpNameOf(message.method, message.params);
  if (name !== undefined) {
    const header = headers['mcp-name'];
    if (header === undefined) return mismatch(`the Mcp-Name header is required for ${message.method}`, 'Mcp-Name', name);
    const decoded = decodeHeaderValue(header);
    if (decoded !== name) return mismatch(`the Mcp-Name header and the body (${JSON.stringify(name)}) disagree`, 'Mcp-Name', name);
  }
  return undefined;
}

interface ParamHeader {
  path: string[];
  header: string;
  numeric: boolean;
}

const paramHeaders = new WeakMap<object, ParamHeader[]>();

/** The `x-mcp-header` declarations of a tool's input schema: properties reachable through `properties` only. */
function declaredParamHeaders(schema: Record<string, unknown>): ParamHeader[] {
  let found = paramHeaders.get(schema);
  if (found) return found;
  found = [];
  const walk = (node: unknown, path: string[]) => {
    const properties = (node as { properties?: unknown } | null)?.properties;
    if (properties === null || typeof properties !== 'object') return;
    for (const [key, def] of Object.entries(properties as Record<string, unknown>)) {
      if (def === null || typeof def !== 'object') continue;
      const header = (def as Record<string, unknown>)['x-mcp-header'];
      const type = (def as Record<string, unknown>).type;
      if (typeof header === 'string' && header !== '') {
        (found as ParamHeader[]).push({ path: [...path, key], header, numeric: type === 'number' || type === 'integer' });
      }
      walk(def, [...path, key]);
    }
  };
  walk(schema, []);
  paramHeaders.set(schema, found);
  return found;
}

/** SEP-2243: every `x-mcp-header` parameter with a value in the body must come as a matching `Mcp-Param-<Name>` header. */
export function paramHeaderRefusal(schema: Record<string, unknown>, args: unknown, headers: Record<string, string>): Refusal | undefined {
  for (const declared of declaredParamHeaders(schema)) {
    let value: unknown = args;
    for (const key of declared.path)
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (value === undefined || value === null || typeof value === 'object') continue;
    const name = `Mcp-Param-${declared.header}`;
    const header = headers[name.toLowerCase()];
    const body = String(value);
    if (header === undefined) return mismatch(`the body carries ${declared.path.join('.')} but the ${name} header is absent`, name, body);
    const decoded = decodeHeaderValue(header);
    if (decoded === undefined) return mismatch(`the ${name} header carries an invalid Base64 value`, name, body);
    const same = declared.numeric && typeof value === 'number' && decoded.trim() !== '' ? Number(decoded) === value : decoded === body;
    if (!same)
      return mismatch(`the ${name} header (${JSON.stringify(decoded)}) and the body (${JSON.stringify(body)}) disagree`, name, body);
  }
  return undefined;
}

export class ModernHttp {
  constructor(
    private readonly server: ModernServer,
    private readonly options: ModernHttpOptions,
    /** Extra checks of a tools/call (`Mcp-Param-*` headers against the tool's `x-mcp-header` declarations). */
    private readonly paramHeaders?: (message: JSONRPCRequest, headers: Record<string, string>) => Promise<Refusal | undefined>,
  ) {}

  /** A POST the endpoint classified as 2026-07-28 (Accept, Content-Type and size already checked). */
  async post(input: PostInput, headers: Record<string, string>, sse: boolean, gone?: AbortSignal): Promise<HttpReply | null> {
    const body = input.body;
    if (body === null || body === undefined) return refuse(null, { status: 400, code: PARSE_ERROR, message: 'Parse error: Invalid JSON' });
    if (Array.isArray(body)) {
      return refuse(null, { status: 400, code: INVALID_REQUEST, message: 'Invalid Request: 2026-07-28 has no JSON-RPC batches' });
    }
    const classified = classify(body);
    if (!classified.ok) return jsonReply(400, classified.error);
    const message = classified.message;
    if (isResponse(message)) {
      return refuse(readableId(body), {
        status: 400,
        code: INVALID_REQUEST,
        message: 'Invalid Request: a client posts requests and notifications only',
      });
    }
    if (!('id' in message)) {
      // notifications carry no envelope of their own; nothing eng-mcp acts on arrives this way
      return { status_code: 202, headers: { 'content-type': 'application/json' }, body: null };
    }
    const request = message as unknown as JSONRPCRequest;
    // the header cross-checks the body first: a disagreement is -32020 whatever either says
    const claim = claimedVersion(request);
    const headerVersion = headers['mcp-protocol-version'];
    if (typeof claim === 'string' && headerVersion !== undefined && headerVersion !== claim) {
      return refuse(
        request.id,
        mismatch(`the MCP-Protocol-Version header (${headerVersion}) and _meta (${claim}) disagree`, 'MCP-Protocol-Version', claim),
      );
    }
    const envelope = readEnvelope(request);
    if ('code' in envelope) return refuse(request.id, envelope);
    const headerRefusal = checkStandardHeaders(request, envelope.version, headers);
    if (headerRefusal) return refuse(request.id, headerRefusal);
    if (!MODERN_METHODS.has(request.method)) {
      return refuse(request.id, { status: 404, code: -32601, message: `Method not found: ${request.method}` });
    }
    if (request.method === 'tools/call' && this.paramHeaders) {
      const refusal = await this.paramHeaders(request, headers);
      if (refusal) return refuse(request.id, refusal);
    }
    return this.answer(request, input.response, sse, gone);
  }

  private async answer(
    request: JSONRPCRequest,
    writer: ChannelWriter | undefined,
    canStream: boolean,
    gone?: AbortSignal,
  ): Promise<HttpReply | null> {
    const leg = new Leg();
    // a client that hangs up cancels its request, whether or not its event stream has opened yet
    const cancel = () => leg.cancel();
    if (gone?.aborted) cancel();
    else gone?.addEventListener('abort', cancel, { once: true });
    let stream: SseStream | undefined;
    const open = (): SseStream | undefined => {
      if (stream || !canStream || !writer) return stream;
      stream = new SseStream(writer, cancel);
      void stream.open({});
      return stream;
    };
    const io: ModernIo = {
      transport: 'http',
      leg,
      notify: (message) => open()?.raw(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    };
    if (request.method === 'subscriptions/listen') {
      const refusal = listenRefusal(request);
      if (refusal) return refuse(request.id, refusal);
    }
    if (request.method === 'subscriptions/listen' && !open()) {
      return refuse(request.id, {
        status: 406,
        code: -32000,
        message: 'Not Acceptable: subscriptions/listen answers with an event stream; accept text/event-stream',
      });
    }
    const timer = canStream ? setTimeout(open, this.options.sseAfterMs) : undefined;
    timer?.unref();
    const answer = await this.server.request(request, io);
    clearTimeout(timer);
    const response = responseOf(request.id, answer);
    const live = stream as SseStream | undefined;
    if (live) {
      // a client that went away cancelled the request: nothing more is said (spec cancellation)
      if (!leg.cancelled) {
        live.raw(`event: message\ndata: ${JSON.stringify(response)}\n\n`);
        await live.close();
      }
      return null;
    }
    return jsonReply('error' in answer ? answer.error.status : 200, response);
  }
}
