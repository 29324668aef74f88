import { describeZodError } from './errors.ts';
import { type Message, MessageSchema } from './messages.ts';

export type DecodeResult = { ok: true; message: Message } | { ok: false; reason: string; type?: string };

/**
 * Decode one text frame of the worker bus. Never throws: the caller logs `reason` and drops
 * the frame (spec: engine-protocol §2.2 — bad frames are dropped, the connection stays up).
 * Returns `undefined` for empty or whitespace-only frames, which are skipped silently.
 */
export function decodeMessage(text: string): DecodeResult | undefined {
  // only a frame that starts with whitespace can be blank: skip the copy trim() makes otherwise
  if (text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === '')) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `json decode error: ${(err as Error).message}` };
  }
  return decodeValue(raw);
}

export function decodeValue(raw: unknown): DecodeResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, reason: 'frame is not a JSON object' };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string') return { ok: false, reason: 'frame has no string "type" field' };
  // the two frames of every call take a hand-written check with the schema's exact rules; anything
  // it does not accept goes through zod, which also writes the error message
  if (type === 'invokefunction' || type === 'invocationresult') {
    const fast = type === 'invokefunction' ? fastInvoke(raw as Record<string, unknown>) : fastResult(raw as Record<string, unknown>);
    if (fast) return { ok: true, message: fast };
  }
  const parsed = MessageSchema.safeParse(raw);
  if (!parsed.success) {
    const unknownType = parsed.error.issues.some((i) => i.code === 'invalid_union' && i.path.length === 1 && i.path[0] === 'type');
    return {
      ok: false,
      type,
      reason: unknownType ? `unknown message type "${type}"` : `invalid "${type}" frame: ${describeZodError(parsed.error)}`,
    };
  }
  return { ok: true, message: parsed.data };
}

/** Serialise a message; `undefined` fields are omitted, as the iii engine omits absent values. */
export function encodeMessage(message: Message): string {
  return JSON.stringify(message);
}

// z.guid(): 8-4-4-4-12 hex, any version
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const isNullishString = (v: unknown) => v === undefined || v === null || typeof v === 'string';

function copyPresent(into: Record<string, unknown>, raw: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) if (raw[key] !== undefined) into[key] = raw[key];
}

function fastInvoke(raw: Record<string, unknown>): Message | undefined {
  const id = raw.invocation_id;
  if (id !== undefined && id !== null && (typeof id !== 'string' || !GUID.test(id))) return undefined;
  if (typeof raw.function_id !== 'string' || raw.function_id.length === 0) return undefined;
  if (!isNullishString(raw.traceparent) || !isNullishString(raw.baggage)) return undefined;
  const action = raw.action as { type?: unknown; queue?: unknown } | null | undefined;
  if (action !== undefined && action !== null) {
    if (typeof action !== 'object') return undefined;
    if (action.type === 'void') {
      // ok
    } else if (action.type !== 'enqueue' || typeof action.queue !== 'string') return undefined;
  }
  const out: Record<string, unknown> = { type: 'invokefunction' };
  copyPresent(out, raw, ['invocation_id', 'function_id', 'data', 'metadata', 'traceparent', 'baggage']);
  if (action !== undefined)
    out.action = action === null ? null : action.type === 'void' ? { type: 'void' } : { type: 'enqueue', queue: action.queue };
  return out as Message;
}

function fastResult(raw: Record<string, unknown>): Message | undefined {
  if (typeof raw.invocation_id !== 'string' || !GUID.test(raw.invocation_id)) return undefined;
  if (!isNullishString(raw.function_id) || !isNullishString(raw.traceparent) || !isNullishString(raw.baggage)) return undefined;
  const error = raw.error as { code?: unknown; message?: unknown; stacktrace?: unknown } | null | undefined;
  if (error !== undefined && error !== null) {
    if (typeof error !== 'object' || typeof error.code !== 'string' || typeof error.message !== 'string') return undefined;
    if (error.stacktrace !== undefined && typeof error.stacktrace !== 'string') return undefined;
  }
  const out: Record<string, unknown> = { type: 'invocationresult' };
  copyPresent(out, raw, ['invocation_id', 'function_id', 'result', 'traceparent', 'baggage']);
  if (error !== undefined) {
    out.error =
      error === null
        ? null
        : { code: error.code, message: error.message, ...(error.stacktrace !== undefined ? { stacktrace: error.stacktrace } : {}) };
  }
  return out as Message;
}
