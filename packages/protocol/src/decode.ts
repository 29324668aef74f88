import { describeZodError } from './errors.ts';
import { type Message, MessageSchema } from './messages.ts';

export type DecodeResult = { ok: true; message: Message } | { ok: false; reason: string; type?: string };

/**
 * Decode one text frame of the worker bus. Never throws: the caller logs `reason` and drops
 * the frame (spec: engine-protocol §2.2 — bad frames are dropped, the connection stays up).
 * Returns `undefined` for empty or whitespace-only frames, which are skipped silently.
 */
export function decodeMessage(text: string): DecodeResult | undefined {
  if (text.trim() === '') return undefined;
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
