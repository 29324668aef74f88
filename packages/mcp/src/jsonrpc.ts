import { type JSONRPCMessage, JSONRPCMessageSchema, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';

// spec: JSON-RPC 2.0 and MCP basic protocol — telling good messages from bad ones, the same way on
// stdio and HTTP. Codes: -32700 parse error, -32600 invalid request (mcp.md §14.1).

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export interface ErrorMessage {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string };
}

export function errorMessage(id: RequestId | null, code: number, message: string): ErrorMessage {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

// spec basic §requests: a string or an integer; the SDK's schema (zod `.int()`) wants a safe one
const validId = (id: unknown): id is RequestId => typeof id === 'string' || Number.isSafeInteger(id);

/** The id of a message, when one can be read (for errors about a message that failed validation). */
export function readableId(raw: unknown): RequestId | null {
  const id = (raw as { id?: unknown } | null)?.id;
  return validId(id) ? id : null;
}

/**
 * `kind` is set when the hand check recognised the message: such a request or notification is one
 * the SDK's own schemas accept as that kind too, so a transport may hand it on without them (`direct-dispatch.ts`).
 */
export type MessageKind = 'request' | 'notification';
export type Classified = { ok: true; message: JSONRPCMessage; kind?: MessageKind } | { ok: false; error: ErrorMessage };

const isPlainObject = (value: unknown) => value !== null && typeof value === 'object' && !Array.isArray(value);
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * `params._meta` as the SDK's schema wants it. Never more lenient than the SDK: a message it does
 * not recognise is dropped without an answer, and its HTTP request would hang until eng-http's timeout.
 */
function metaOk(params: Record<string, unknown> | undefined): boolean {
  const meta = params?._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  const { progressToken, [RELATED_TASK]: task } = meta as Record<string, unknown>;
  if (progressToken !== undefined && !validId(progressToken)) return false;
  return task === undefined || (isPlainObject(task) && typeof (task as { taskId?: unknown }).taskId === 'string');
}

/** The common shapes (a request or notification with object params), checked by hand: no schema pass over big arguments. */
function wellFormed(value: Record<string, unknown>): boolean {
  if (value.jsonrpc !== '2.0' || typeof value.method !== 'string') return false;
  if ('id' in value && !validId(value.id)) return false;
  if (value.params !== undefined && !isPlainObject(value.params)) return false;
  if (!metaOk(value.params as Record<string, unknown> | undefined)) return false;
  for (const key in value) if (!REQUEST_KEYS.has(key)) return false;
  return true;
}

/** One parsed JSON value → a JSON-RPC message, or the -32600 answer naming what is wrong. */
export function classify(raw: unknown): Classified {
  if (isPlainObject(raw) && wellFormed(raw as Record<string, unknown>)) {
    return { ok: true, message: raw as JSONRPCMessage, kind: 'id' in (raw as object) ? 'request' : 'notification' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, error: errorMessage(null, INVALID_REQUEST, 'Invalid Request: a message must be a JSON object') };
  }
  const value = raw as Record<string, unknown>;
  if (value.jsonrpc !== '2.0') {
    return { ok: false, error: errorMessage(readableId(value), INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"') };
  }
  if ('method' in value && 'id' in value && readableId(value) === null) {
    // spec basic §requests: the id MUST be a string or an integer, never null
    return { ok: false, error: errorMessage(null, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer') };
  }
  if ('method' in value && typeof value.method !== 'string') {
    return { ok: false, error: errorMessage(readableId(value), INVALID_REQUEST, 'Invalid Request: "method" must be a string') };
  }
  if (isPlainObject(value.params) && !metaOk(value.params as Record<string, unknown>)) {
    return {
      ok: false,
      error: errorMessage(
        readableId(value),
        INVALID_REQUEST,
        'Invalid Request: "params._meta" must be an object; its progressToken a string or an integer',
      ),
    };
  }
  const parsed = JSONRPCMessageSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      error: errorMessage(readableId(value), INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response'),
    };
  }
  return { ok: true, message: parsed.data };
}

export function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  // only called on messages `classify` accepted, where method + id means a request
  return 'method' in message && 'id' in message;
}

export function isNotification(message: JSONRPCMessage): boolean {
  return 'method' in message && !('id' in message);
}

export function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return !('method' in message) && ('result' in message || 'error' in message);
}

/** The request a `notifications/cancelled` names, if the message is one. */
export function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** spec 2025-03-26 allowed batches; 2025-06-18 removed them. */
export function batchesAllowed(protocolVersion: string | undefined): boolean {
  return protocolVersion === '2025-03-26';
}
