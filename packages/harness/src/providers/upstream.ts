import { DEFAULT_SETTINGS } from '../router/settings.ts';

// The official clients read a streamed answer line by line (SSE) and hold a line whole before
// parsing it: one endless `data:` line would fill the provider's memory (and the OpenAI client
// rescans its growing buffer: 5 s of CPU for an 8 MiB line) before any delta reached the cap.
// Their response bodies go through this guard, which refuses a line longer than the cap needs.

/** Room for one event's JSON envelope around its delta. */
const ENVELOPE_BYTES = 64 * 1024;

/** The longest upstream line an answer capped at `maxAnswerBytes` needs. */
export function lineLimitFor(maxAnswerBytes: number = DEFAULT_SETTINGS.max_answer_bytes): number {
  return maxAnswerBytes + ENVELOPE_BYTES;
}

const NEWLINE = 0x0a;

/** What the guard fails the body with; the runtime ends the generation with the cap's error. */
export class UpstreamLineTooLong extends Error {
  readonly code = 'upstream_line_too_long';
  constructor(readonly limit: number) {
    super(`one upstream line was longer than ${limit} bytes`);
  }
}

/** The guard's error, wherever a client wrapped it (`cause` chains). */
export function lineTooLong(err: unknown): UpstreamLineTooLong | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UpstreamLineTooLong) return e;
  }
  return undefined;
}

/** A `fetch` for the official clients whose response bodies fail once a line outgrows `maxLineBytes`. */
export function lineLimitedFetch(maxLineBytes: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    let line = 0;
    const guard = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0;
        for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
          if (line + nl - start > maxLineBytes) break;
          line = 0;
          start = nl + 1;
        }
        line += chunk.length - start;
        if (line > maxLineBytes) {
          controller.error(new UpstreamLineTooLong(maxLineBytes));
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(guard), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
