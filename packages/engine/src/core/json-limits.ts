import { type ErrorBody, ErrorCode } from '@eng/protocol';

// Issue 12 items 1 and 13: foreign JSON and ids are bounded where they enter the engine.
//
// V8's JSON.parse is iterative, but JSON.stringify, structuredClone, zod, Ajv and most code that
// walks a value recurse: a value nested a few thousand levels deep overflows the stack wherever
// it is next written out (a `functions_changed` signature, a result sent back, a list). So every
// entry point (bus frames, HTTP trigger bodies, OTLP bodies, the streams socket) measures the
// nesting of the raw text before parsing it, with one cheap, non-recursive pass.

/**
 * Deepest nesting of arrays and objects accepted in JSON that enters the engine; the outermost
 * value counts as one (a bus frame's envelope is level 1, its `data` object level 2). Deep enough
 * for any real schema or document; shallow enough that everything the engine does with the value,
 * and the few levels it wraps around it, stays far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Default nesting limit of a bus frame: 128 levels of data plus room for the envelopes around it
 * (the frame, `result`, an HTTP result's `body`…), so a worker can answer with a value as deep as
 * the deepest one it may be sent.
 */
export const MAX_FRAME_DEPTH = MAX_JSON_DEPTH + 8;

/** Longest function id, trigger id, trigger type id or worker name, in UTF-8 bytes. */
export const MAX_ID_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const OPEN = OPEN_ARRAY | 0x20;
const CLOSE = CLOSE_ARRAY | 0x20;

/**
 * Whether JSON text (UTF-8 bytes) nests arrays/objects deeper than `limit`: brackets are counted
 * outside strings (escapes honoured), in a single pass that never recurses and allocates nothing.
 * Text shorter than 2 × (limit + 1) bytes is not scanned: valid JSON needs an opening and a closing
 * bracket per level, and invalid JSON fails to parse without recursing. Multi-byte UTF-8 sequences
 * never contain bytes below 0x80, so scanning bytes is exact. Short strings are stepped through;
 * the end of a long one is found with the native `indexOf` (a large base64 payload costs little).
 */
export function jsonTooDeep(bytes: Uint8Array, limit: number = MAX_JSON_DEPTH): boolean {
  const length = bytes.length;
  if (length < 2 * (limit + 1)) return false;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    let c = bytes[i] as number;
    if (c === QUOTE) {
      const stop = i + 64 < length ? i + 64 : length;
      for (i++; i < stop; i++) {
        c = bytes[i] as number;
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++;
      }
      if (i < stop || i >= length) continue;
      // still inside: the string ends at the first quote after an even run of backslashes
      for (;;) {
        i = bytes.indexOf(QUOTE, i);
        if (i === -1) return false;
        let k = i - 1;
        while (bytes[k] === BACKSLASH) k--;
        if (((i - 1 - k) & 1) === 0) break;
        i++;
      }
      continue;
    }
    // `[` and `{` differ only in bit 0x20, as do `]` and `}`
    c |= 0x20;
    if (c === OPEN) {
      if (++depth > limit) return true;
    } else if (c === CLOSE) depth--;
  }
  return false;
}

/** One wording everywhere: "<what> nests arrays/objects more than 128 levels deep; …". */
export function tooDeepMessage(what: string, limit: number = MAX_JSON_DEPTH, setting?: string): string {
  return `${what} nests arrays/objects more than ${limit} levels deep; the engine accepts at most ${limit}${setting ? ` (${setting})` : ''}`;
}

const MAX_PICKED_BYTES = 4 * MAX_ID_BYTES;

/**
 * The string values of some top-level keys of a JSON object, read without parsing the rest (a
 * frame refused for its depth still gets an answer under its `invocation_id`). Strings longer
 * than 1 KiB, and keys whose value is not a string, are left out. Never recurses.
 */
export function topLevelStrings(bytes: Uint8Array, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const length = bytes.length;
  let i = 0;
  while (i < length && (bytes[i] as number) <= 0x20) i++;
  if (bytes[i] !== OPEN_OBJECT) return out;
  let depth = 1;
  let expectKey = true;
  let key: string | undefined;
  for (i++; i < length; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      const start = i;
      for (i++; i < length; i++) {
        const d = bytes[i] as number;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
      if (i >= length) break;
      if (depth !== 1) continue;
      if (expectKey) {
        key = i - start <= MAX_PICKED_BYTES ? decodeString(bytes, start, i + 1) : undefined;
        expectKey = false;
      } else if (key !== undefined && keys.includes(key) && i - start <= MAX_PICKED_BYTES) {
        const value = decodeString(bytes, start, i + 1);
        if (value !== undefined) out[key] = value;
        key = undefined;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (--depth === 0) break;
    } else if (c === 0x2c && depth === 1) {
      expectKey = true;
      key = undefined;
    }
  }
  return out;
}

function decodeString(bytes: Uint8Array, start: number, end: number): string | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8'));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The refusal of an id longer than MAX_ID_BYTES, or undefined when it fits. `kind` names the
 * id ("function id", "trigger id", …); the id itself is not repeated (it may be a megabyte).
 */
export function idTooLong(kind: string, id: string): ErrorBody | undefined {
  if (id.length <= MAX_ID_BYTES / 3) return undefined;
  const bytes = Buffer.byteLength(id);
  if (bytes <= MAX_ID_BYTES) return undefined;
  return {
    code: ErrorCode.IdTooLong,
    message: `${kind} is ${bytes} bytes long; the engine accepts ids of at most ${MAX_ID_BYTES} bytes (it begins "${preview(id)}")`,
  };
}

/** The first 40 characters of a foreign string, for an error message. */
export function preview(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
