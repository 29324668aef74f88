import type { ErrorKind, GeneratedBlock } from './types.ts';

// Issue 24 item 4: one answer (text, thinking, tool-call arguments) is capped at the router's
// `settings.max_answer_bytes`. The provider stops at the cap; the router checks the result and the
// harness, which reads the stream, counts it again (a provider worker may ignore the cap). All end
// the generation with the same error.

/**
 * A delta longer than this (UTF-16 units) travels in several frames: even fully escaped JSON keeps
 * a frame under 400 KiB, far from the engine's frame limit and cheap for every reader.
 */
export const FRAME_DELTA_CHARS = 64 * 1024;

/**
 * The second checks (the router's on a result, the harness's on the stream) allow this much over
 * the cap: the provider, which counts exactly, must be the one to stop first.
 */
export const ROUTER_SLACK_BYTES = 64 * 1024;

/** Not worth retrying: the same request would produce the same answer. */
export const ANSWER_TOO_LARGE_KIND: ErrorKind = 'permanent';

export function answerTooLarge(limit: number): string {
  return `the answer exceeded max_answer_bytes (${limit} bytes)`;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The bytes of a result's content the cap counts. */
export function contentBytes(content: GeneratedBlock[]): number {
  let bytes = 0;
  for (const block of content) {
    if (!block || typeof block !== 'object') continue;
    if (block.type === 'text') bytes += utf8Bytes(block.text ?? '');
    else if (block.type === 'thinking') bytes += utf8Bytes(block.text ?? '') + utf8Bytes(block.signature ?? '');
    else if (block.type === 'tool_call') bytes += utf8Bytes(block.id ?? '') + utf8Bytes(block.name ?? '') + jsonBytes(block.arguments);
    else bytes += jsonBytes(block);
  }
  return bytes;
}

function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : utf8Bytes(JSON.stringify(value) ?? '');
}

/** `text` in pieces of at most `max` UTF-16 units, never splitting a surrogate pair. */
export function pieces(text: string, max = FRAME_DELTA_CHARS): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + max, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

/**
 * The bytes of a stream's frames the cap counts, frame by frame: deltas and signatures, and what a
 * tool call's closing frame carries beyond the deltas it repeats.
 */
export class StreamBytes {
  total = 0;
  private readonly toolDeltas = new Map<unknown, number>();

  add(frame: { type: string; index?: unknown; delta?: unknown; signature?: unknown; arguments?: unknown }): number {
    if (typeof frame.delta === 'string') {
      const bytes = utf8Bytes(frame.delta);
      if (frame.type === 'toolcall_delta') this.toolDeltas.set(frame.index, (this.toolDeltas.get(frame.index) ?? 0) + bytes);
      this.total += bytes;
    } else if (typeof frame.signature === 'string') this.total += utf8Bytes(frame.signature);
    else if (frame.type === 'toolcall_end') this.total += Math.max(0, jsonBytes(frame.arguments) - (this.toolDeltas.get(frame.index) ?? 0));
    return this.total;
  }
}
