import { describe, expect, it } from 'vitest';
import * as ws from 'ws';
import { closeFrame, FrameTracker, OPCODE_CLOSE } from '../src/ws-frames.ts';

// The byte-splicing /ws proxy (issue 7 §3) only reads frame headers; these pin that it finds every
// frame boundary whatever the length encoding and however TCP cuts the stream. Frames are made by
// `ws`'s own encoder and close frames checked with its own decoder.

// not in @types/ws, but exported by ws's ESM entry
const { Sender, Receiver } = ws as unknown as {
  Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] };
  Receiver: new (
    options: Record<string, unknown>,
  ) => NodeJS.WritableStream & {
    on(event: 'conclude', listener: (code: number, reason: Buffer) => void): void;
    on(event: 'error', listener: (err: Error) => void): void;
  };
};

function frame(payloadBytes: number, options: { opcode?: number; mask?: boolean; fin?: boolean } = {}): Buffer {
  const data = Buffer.alloc(payloadBytes, 0x61);
  return Buffer.concat(
    Sender.frame(data, {
      fin: options.fin ?? true,
      opcode: options.opcode ?? 0x2,
      mask: options.mask ?? false,
      readOnly: false,
      rsv1: false,
    }),
  );
}

/** Feed `stream` cut at `cuts`; returns, after each piece, whether the tracker sat on a boundary. */
function feed(tracker: FrameTracker, stream: Buffer, cuts: number[]): boolean[] {
  const atBoundary: boolean[] = [];
  let from = 0;
  for (const cut of [...cuts, stream.length]) {
    expect(tracker.advance(stream.subarray(from, cut))).toBe(cut - from);
    atBoundary.push(tracker.atBoundary);
    from = cut;
  }
  return atBoundary;
}

describe('FrameTracker', () => {
  const lengths = [
    ['7-bit', 0],
    ['7-bit', 125],
    ['16-bit', 126],
    ['16-bit', 65_535],
    ['64-bit', 65_536],
    ['64-bit', 70_000],
  ] as const;

  for (const [encoding, bytes] of lengths) {
    for (const mask of [false, true]) {
      it(`follows a ${bytes}-byte frame (${encoding} length, ${mask ? 'masked' : 'unmasked'}) split at every header byte`, () => {
        const one = frame(bytes, { mask });
        const headerSize = one.length - bytes;
        const stream = Buffer.concat([one, frame(3, { mask })]);
        for (let cut = 1; cut <= headerSize; cut++) {
          const tracker = new FrameTracker();
          const boundaries = feed(tracker, stream, [cut, one.length]);
          // mid-header, at the end of the first frame, at the end of the second
          expect(boundaries).toEqual([cut === headerSize && bytes === 0, true, true]);
          expect(tracker.frames).toBe(2);
        }
      });
    }
  }

  it('finds every boundary when several frames share one chunk and the stream is cut one byte at a time', () => {
    const frames = [frame(5), frame(300, { mask: true }), frame(0, { opcode: 0x9 }), frame(70_000), frame(1, { mask: true })];
    const stream = Buffer.concat(frames);
    const ends = new Set<number>();
    let at = 0;
    for (const f of frames) {
      at += f.length;
      ends.add(at);
    }
    const whole = new FrameTracker();
    whole.advance(stream);
    expect([whole.frames, whole.atBoundary]).toEqual([5, true]);
    const bytewise = new FrameTracker();
    for (let i = 0; i < stream.length; i++) {
      bytewise.advance(stream.subarray(i, i + 1));
      expect(bytewise.atBoundary).toBe(ends.has(i + 1));
    }
    expect(bytewise.frames).toBe(5);
  });

  it('reads 64-bit lengths above 4 GiB (a frame that is still in flight after a mebibyte)', () => {
    const header = Buffer.from([0x82, 127, 0, 0, 0, 1, 0, 0, 0, 5]); // 2^32 + 5 bytes
    const tracker = new FrameTracker();
    tracker.advance(header);
    expect(tracker.payloadLeft).toBe(2 ** 32 + 5);
    tracker.advance(Buffer.alloc(1024 * 1024));
    expect(tracker.payloadLeft).toBe(2 ** 32 + 5 - 1024 * 1024);
    expect(tracker.atBoundary).toBe(false);
  });

  it('stops at the first boundary when asked, so a frame can be inserted there', () => {
    const first = frame(10);
    const stream = Buffer.concat([first, frame(20), frame(30)]);
    const tracker = new FrameTracker();
    tracker.advance(stream.subarray(0, 4)); // inside the first frame
    const stop = tracker.advance(stream, 4, true);
    expect(stop).toBe(first.length);
    expect(tracker.atBoundary).toBe(true);
    expect(tracker.advance(stream, stop)).toBe(stream.length);
    expect(tracker.frames).toBe(3);
    // a chunk that ends before the frame does: no boundary in it
    const partial = new FrameTracker();
    expect(partial.advance(first.subarray(0, 6), 0, true)).toBe(6);
    expect(partial.atBoundary).toBe(false);
  });

  it('reports a close frame once its payload has gone past, also when cut inside it', () => {
    const close = closeFrame(4001, Buffer.from('bye'), true);
    const stream = Buffer.concat([frame(8), close]);
    const tracker = new FrameTracker();
    tracker.advance(stream.subarray(0, stream.length - 2));
    expect(tracker.closed).toBe(false);
    tracker.advance(stream.subarray(stream.length - 2));
    expect(tracker.closed).toBe(true);
    expect(stream[frame(8).length]! & 0x0f).toBe(OPCODE_CLOSE);
  });
});

describe('closeFrame', () => {
  for (const masked of [false, true]) {
    it(`builds a ${masked ? 'masked client' : 'server'} close frame that ws decodes`, async () => {
      const receiver = new Receiver({ isServer: masked, maxPayload: 0 });
      const concluded = new Promise<{ code: number; reason: string }>((resolve, reject) => {
        receiver.on('conclude', (code, reason) => resolve({ code, reason: reason.toString() }));
        receiver.on('error', reject);
      });
      const reason = 'console worker shutting down — bientôt';
      receiver.write(closeFrame(1001, Buffer.from(reason), masked));
      expect(await concluded).toEqual({ code: 1001, reason });
    });
  }

  it('refuses a reason longer than a control frame can carry', () => {
    expect(() => closeFrame(1001, Buffer.alloc(124), false)).toThrow('at most 123');
  });
});
