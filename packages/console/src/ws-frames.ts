import { randomBytes } from 'node:crypto';

/**
 * Frame-boundary tracking for the byte-splicing WebSocket proxy. The proxy relays raw bytes; this
 * reads only the 2–14 byte frame headers going past (RFC 6455 §5.2) and never copies a payload, so
 * the proxy knows where a frame ends (to inject a close frame at a boundary on shutdown) and when a
 * close frame has gone by (to tear the TCP connections down in the order §7.1.1 asks for).
 */

export const OPCODE_CLOSE = 0x8;
/** RFC 6455 §5.5: a control frame carries at most 125 bytes: 2 for the code, 123 for the reason. */
export const MAX_CLOSE_REASON_BYTES = 123;

/** Header size announced by a frame's second byte: 2, plus 2 or 8 for the extended length, plus 4 for a mask key. */
function headerLength(secondByte: number): number {
  const len7 = secondByte & 0x7f;
  return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (secondByte & 0x80 ? 4 : 0);
}

/** Payload length of the complete header at `at` (64-bit lengths are exact up to 2^53). */
function payloadLength(buf: Buffer, at: number): number {
  const len7 = (buf[at + 1] as number) & 0x7f;
  if (len7 < 126) return len7;
  if (len7 === 126) return buf.readUInt16BE(at + 2);
  return buf.readUInt32BE(at + 2) * 0x1_0000_0000 + buf.readUInt32BE(at + 6);
}

/** Follows one direction of a WebSocket byte stream, frame by frame. */
export class FrameTracker {
  /** Payload bytes of the current frame not seen yet. */
  private remaining = 0;
  /** The start of a header split across chunks (a header is at most 14 bytes). */
  private readonly partial = Buffer.allocUnsafe(14);
  private partialBytes = 0;
  private inClose = false;
  /** Frame headers seen so far. */
  frames = 0;
  /** A whole close frame (header and payload) has gone past. */
  closed = false;

  /** Payload bytes of the current frame still to come. */
  get payloadLeft(): number {
    return this.remaining;
  }

  /** True between frames: a frame may be inserted here. */
  get atBoundary(): boolean {
    return this.remaining === 0 && this.partialBytes === 0;
  }

  /**
   * Account for `chunk` from `start`. Returns where it stopped: the end of the chunk, or with
   * `stopAtBoundary` the first frame boundary reached after `start` (check `atBoundary`: a chunk may
   * end inside a frame).
   */
  advance(chunk: Buffer, start = 0, stopAtBoundary = false): number {
    const end = chunk.length;
    let i = start;
    while (i < end) {
      if (this.remaining > 0) {
        if (end - i < this.remaining) {
          this.remaining -= end - i;
          return end;
        }
        i += this.remaining;
        this.remaining = 0;
        this.frameDone();
        if (stopAtBoundary) return i;
        continue;
      }
      let header = chunk;
      let at = i;
      const size = end - i >= 2 && this.partialBytes === 0 ? headerLength(chunk[i + 1] as number) : 0;
      if (size > 0 && end - i >= size) {
        i += size; // the usual case: the whole header is in this chunk
      } else {
        // a header split across chunks: collect it byte by byte
        const partial = this.partial;
        while (i < end && (this.partialBytes < 2 || this.partialBytes < headerLength(partial[1] as number))) {
          partial[this.partialBytes++] = chunk[i++] as number;
        }
        if (this.partialBytes < 2 || this.partialBytes < headerLength(partial[1] as number)) return end;
        this.partialBytes = 0;
        header = partial;
        at = 0;
      }
      this.frames++;
      this.remaining = payloadLength(header, at);
      if (((header[at] as number) & 0x0f) === OPCODE_CLOSE) this.inClose = true;
      if (this.remaining === 0) {
        this.frameDone();
        if (stopAtBoundary) return i;
      }
    }
    return i;
  }

  private frameDone(): void {
    if (this.inClose) {
      this.inClose = false;
      this.closed = true;
    }
  }
}

/**
 * A close frame with `code` and `reason` (at most 123 bytes). `masked` for frames sent by a client
 * (to the engine), unmasked for frames sent by a server (to the browser), RFC 6455 §5.3.
 */
export function closeFrame(code: number, reason: Buffer, masked: boolean): Buffer {
  if (reason.length > MAX_CLOSE_REASON_BYTES) throw new RangeError(`close reason is ${reason.length} bytes, at most 123 fit`);
  const length = 2 + reason.length;
  const offset = masked ? 6 : 2;
  const frame = Buffer.allocUnsafe(offset + length);
  frame[0] = 0x80 | OPCODE_CLOSE;
  frame[1] = (masked ? 0x80 : 0) | length;
  frame.writeUInt16BE(code, offset);
  reason.copy(frame, offset + 2);
  if (masked) {
    // a fresh key per frame (§5.3); masking keeps intermediaries from reading it as something else
    const key = randomBytes(4);
    key.copy(frame, 2);
    for (let i = 0; i < length; i++) frame[offset + i] = (frame[offset + i] as number) ^ (key[i & 3] as number);
  }
  return frame;
}
