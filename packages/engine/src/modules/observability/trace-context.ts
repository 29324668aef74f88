import { randomBytes } from 'node:crypto';

// spec: engine-protocol §2.6 — W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex flags>`).

export interface SpanContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Parse a traceparent header; null when absent or malformed (an invalid one is ignored, as W3C says). */
export function parseTraceparent(value: string | undefined | null): SpanContext | null {
  if (!value) return null;
  // the same header is parsed several times along one call (server span, call observer, handler)
  if (value === lastValue) return lastContext;
  const context = parseUncached(value);
  lastValue = value;
  lastContext = context;
  return context;
}

let lastValue: string | undefined;
let lastContext: SpanContext | null = null;

/** Whether `value[from..to)` is lower-case hex. */
function lowerHex(value: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

function parseUncached(value: string): SpanContext | null {
  // the common form, exactly 55 characters in lower case (what every SDK sends): checked by hand
  if (
    value.length === 55 &&
    value.charCodeAt(2) === 45 &&
    value.charCodeAt(35) === 45 &&
    value.charCodeAt(52) === 45 &&
    lowerHex(value, 0, 2) &&
    lowerHex(value, 3, 35) &&
    lowerHex(value, 36, 52) &&
    lowerHex(value, 53, 55)
  ) {
    if (value.charCodeAt(0) === 102 && value.charCodeAt(1) === 102) return null; // version ff
    const traceId = value.slice(3, 35);
    const spanId = value.slice(36, 52);
    if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
    const last = value.charCodeAt(54);
    return { traceId, spanId, sampled: ((last <= 57 ? last - 48 : last - 87) & 1) === 1 };
  }
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || match[1] === 'ff') return null;
  const traceId = match[2] as string;
  const spanId = match[3] as string;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, sampled: (Number.parseInt(match[4] as string, 16) & 1) === 1 };
}

export function formatTraceparent(context: SpanContext): string {
  const value = `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
  // what a new span's context is formatted for is parsed next (the call made inside the span)
  lastValue = value;
  lastContext = context;
  return value;
}

// Random ids are cut from a pooled hex string: one crypto call and one hex conversion per 128
// trace ids, not per span (a slice of it costs a few nanoseconds).
const POOL_BYTES = 2048;
let pool = '';
let offset = 0;
function randomHex(bytes: number): string {
  const chars = bytes * 2;
  if (offset + chars > pool.length) {
    pool = randomBytes(POOL_BYTES).toString('hex');
    offset = 0;
  }
  const hex = pool.slice(offset, offset + chars);
  offset += chars;
  return hex;
}
export function newTraceId(): string {
  return randomHex(16);
}
export function newSpanId(): string {
  return randomHex(8);
}

const HEX_ID = /^[0-9a-f]+$/;

/**
 * A trace or span id from OTLP/JSON: lower-case hex as the JS serializers send it, or base64 as
 * the protobuf JSON mapping of other SDKs does. Null for an empty, all-zero or malformed id.
 */
export function normaliseId(value: unknown, bytes: 16 | 8): string | null {
  if (typeof value !== 'string' || value.length === 0) return null;
  const hexLength = bytes * 2;
  let hex: string | null = null;
  if (value.length === hexLength) {
    const lower = value.toLowerCase();
    if (HEX_ID.test(lower)) hex = lower;
  }
  if (hex === null) {
    // base64 of 16 bytes is 24 characters, of 8 bytes 12 characters (padding included)
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
    const decoded = Buffer.from(value, 'base64');
    if (decoded.length !== bytes) return null;
    hex = decoded.toString('hex');
  }
  if (/^0+$/.test(hex)) return null;
  return hex;
}

/** Rewrite (or add) one key of a W3C baggage header, keeping the other members (§2.6 `iii.function.id`). */
export function setBaggageEntry(baggage: string | undefined, key: string, value: string): string {
  const members = (baggage ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0 && m.split('=')[0]?.trim() !== key);
  // W3C baggage-octet allows `:` and `/`: percent-encode only what it does not (and `%`)
  members.push(`${key}=${value.replace(/[^\x21\x23-\x24\x26-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]/g, (c) => encodeURIComponent(c))}`);
  return members.join(',');
}
