import type { ChannelWriter } from '@eng/sdk';
import { ANSWER_TOO_LARGE_KIND, answerTooLarge, FRAME_DELTA_CHARS, pieces, utf8Bytes } from '../router/answer-cap.ts';
import { DEFAULT_SETTINGS } from '../router/settings.ts';
import type { ErrorKind, GeneratedBlock, GenerationResult, StopReason, StreamFrame, Usage } from '../router/types.ts';

/**
 * What a provider's stream adapter writes to: it builds the assistant content for the result and
 * forwards the same events as frames into the caller's channel. Deltas that arrive in one burst
 * (one network read) leave together, coalesced until the event loop turns, in frames of at most
 * FRAME_DELTA_CHARS. The answer is capped at `maxAnswerBytes`: past it nothing more is kept, the
 * upstream request is stopped, and the generation can only end with the cap's error.
 */
export class GenerationOutput {
  readonly content: GeneratedBlock[] = [];
  private readonly pending: StreamFrame[] = [];
  private flushScheduled = false;
  private writerFailed = false;
  private finished = false;
  private answerBytes = 0;
  private overflow?: string;

  constructor(
    private readonly provider: string,
    private readonly model: string,
    private readonly writer: ChannelWriter | undefined,
    /** Called when the caller stops reading (its channel closed) or the answer outgrew the cap: cancel upstream. */
    private readonly stopUpstream: () => void,
    private readonly maxAnswerBytes: number = DEFAULT_SETTINGS.max_answer_bytes,
  ) {
    this.push({ type: 'start', provider, model });
  }

  /** Why the answer was cut at the cap, once it was. */
  get exceeded(): string | undefined {
    return this.overflow;
  }

  /** End the answer at the cap: `detail` says what gave it away when it was not a delta. */
  exceed(detail?: string): void {
    if (this.overflow) return;
    this.overflow = detail ? `${answerTooLarge(this.maxAnswerBytes)}: ${detail}` : answerTooLarge(this.maxAnswerBytes);
    this.stopUpstream();
  }

  textDelta(index: number, delta: string): void {
    if (!delta || !this.admit(delta)) return;
    const block = this.block(index, () => ({ type: 'text', text: '' }));
    if (block.type === 'text') block.text += delta;
    this.delta('text_delta', index, delta);
  }

  thinkingDelta(index: number, delta: string): void {
    if (!delta || !this.admit(delta)) return;
    const block = this.block(index, () => ({ type: 'thinking', text: '' }));
    if (block.type === 'thinking') block.text += delta;
    this.delta('thinking_delta', index, delta);
  }

  thinkingSignature(index: number, signature: string): void {
    if (!this.admit(signature)) return;
    const block = this.block(index, () => ({ type: 'thinking', text: '' }));
    if (block.type === 'thinking') block.signature = (block.signature ?? '') + signature;
    this.push({ type: 'thinking_signature', index, signature });
  }

  toolCallStart(index: number, id: string, name: string): void {
    if (!this.admit(id, name)) return;
    this.block(index, () => ({ type: 'tool_call', id, name, arguments: {}, raw: '' }));
    this.push({ type: 'toolcall_start', index, id, name });
  }

  toolCallDelta(index: number, delta: string): void {
    if (!delta) return;
    const block = this.content[index];
    if (block?.type !== 'tool_call' || !this.admit(delta)) return;
    block.raw = (block.raw ?? '') + delta;
    this.delta('toolcall_delta', index, delta);
  }

  /** Close a tool call: its raw JSON arguments are parsed (a malformed tail becomes `{_raw}`). */
  toolCallEnd(index: number): void {
    const block = this.content[index];
    if (block?.type !== 'tool_call') return;
    block.arguments = parseArguments(block.raw ?? '');
    delete block.raw;
    this.push({ type: 'toolcall_end', index, id: block.id, name: block.name, arguments: block.arguments });
  }

  /** Finish successfully: the `done` frame and the result. Tool calls still open are closed first. */
  async done(stopReason: StopReason, nativeStopReason: string | undefined, usage: Usage | undefined): Promise<GenerationResult> {
    if (this.overflow) return this.failWith('error', ANSWER_TOO_LARGE_KIND, this.overflow, usage);
    this.content.forEach((block, index) => {
      if (block.type === 'tool_call' && block.raw !== undefined) this.toolCallEnd(index);
    });
    this.push({ type: 'done', stop_reason: stopReason, native_stop_reason: nativeStopReason, usage });
    await this.finish();
    return this.result(true, stopReason, nativeStopReason, usage);
  }

  /** Finish with an error. Once the answer outgrew the cap, that is the error, whatever the adapter saw (the abort it caused). */
  fail(stopReason: 'error' | 'aborted', kind: ErrorKind, message: string, usage?: Usage): Promise<GenerationResult> {
    if (this.overflow) return this.failWith('error', ANSWER_TOO_LARGE_KIND, this.overflow, usage);
    return this.failWith(stopReason, kind, message, usage);
  }

  private async failWith(stopReason: 'error' | 'aborted', kind: ErrorKind, message: string, usage?: Usage): Promise<GenerationResult> {
    this.content.forEach((block) => {
      if (block.type === 'tool_call' && block.raw !== undefined) {
        block.arguments = { _raw: block.raw };
        delete block.raw;
      }
    });
    this.push({ type: 'error', stop_reason: stopReason, error_kind: kind, message, usage });
    await this.finish();
    return { ...this.result(false, stopReason, undefined, usage), error: { kind, message } };
  }

  private result(ok: boolean, stopReason: StopReason, native: string | undefined, usage: Usage | undefined): GenerationResult {
    const out: GenerationResult = {
      ok,
      provider: this.provider,
      model: this.model,
      content: this.content.filter(Boolean),
      stop_reason: stopReason,
    };
    if (native) out.native_stop_reason = native;
    if (usage) out.usage = usage;
    return out;
  }

  private block(index: number, create: () => GeneratedBlock): GeneratedBlock {
    let block = this.content[index];
    if (!block) {
      block = create();
      this.content[index] = block;
    }
    return block;
  }

  /** Count generated strings against the cap; false (and upstream stopped) once they outgrow it. */
  private admit(...texts: string[]): boolean {
    if (this.overflow) return false;
    let bytes = 0;
    for (const text of texts) bytes += utf8Bytes(text);
    if (this.answerBytes + bytes > this.maxAnswerBytes) {
      this.exceed();
      return false;
    }
    this.answerBytes += bytes;
    return true;
  }

  private delta(type: 'text_delta' | 'thinking_delta' | 'toolcall_delta', index: number, delta: string): void {
    const last = this.pending[this.pending.length - 1];
    if (last && last.type === type && last.index === index && last.delta.length + delta.length <= FRAME_DELTA_CHARS) {
      last.delta += delta;
      return;
    }
    for (const piece of pieces(delta)) this.push({ type, index, delta: piece });
  }

  private push(frame: StreamFrame): void {
    if (!this.writer || this.writerFailed || this.finished) return;
    this.pending.push(frame);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (!this.writer || this.writerFailed || this.pending.length === 0) return;
    const frames = this.pending.splice(0);
    for (const frame of frames) {
      this.writer.sendMessage(JSON.stringify(frame)).catch(() => {
        if (this.writerFailed) return;
        this.writerFailed = true;
        this.stopUpstream();
      });
    }
  }

  private async finish(): Promise<void> {
    if (this.finished) return;
    this.flush();
    this.finished = true;
    if (this.writer && !this.writerFailed) await this.writer.end().catch(() => {});
  }
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return { _raw: raw };
  }
}
