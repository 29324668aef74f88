import { randomBytes } from 'node:crypto';
import type { Channel, EngClient, WorkerSpan } from '@eng/sdk';
import { ANSWER_TOO_LARGE_KIND, answerTooLarge, ROUTER_SLACK_BYTES, StreamBytes } from '../router/answer-cap.ts';
import type {
  ChatMessage,
  ContentBlock,
  ErrorKind,
  GeneratedBlock,
  GenerationResult,
  StopReason,
  StreamFrame,
  ToolSpec,
  Usage,
} from '../router/types.ts';
import { answerLimit } from './answer-limit.ts';
import { AssistantEntry } from './assistant-entry.ts';
import { AGENT_TOOL } from './transcript.ts';

// One generation step: the assistant entry streams from the provider's frames (through a channel
// the router hands the provider), and ends with the router's result, which is authoritative.

export interface GenerationRequest {
  sessionId: string;
  turnId: string;
  step: number;
  entryId: string;
  model: string;
  provider: string;
  messages: ChatMessage[];
  system: string;
  tools?: ToolSpec[];
  thinking_level?: string;
  provider_options?: Record<string, unknown>;
}

export interface FunctionCall {
  id: string;
  function_id: string;
  arguments: unknown;
  /** Why the call cannot run as written (unknown tool, no function id). */
  invalid?: string;
}

export interface GenerationOutcome {
  content: ContentBlock[];
  stop_reason: StopReason;
  error_message?: string;
  error_kind?: ErrorKind;
  usage?: Usage;
  calls: FunctionCall[];
}

const ABORT_GRACE_MS = 3000;

/** A provider's call id we keep: short, plain characters (Anthropic accepts no others either). */
const PROVIDER_CALL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The id of each call of one generation. A provider's id is kept when it is plain and unused in
 * this session's context; a missing, odd or repeated one gets a fresh random id (issue 24 item 2):
 * a call id names one call, so nothing decided for one call can apply to another.
 */
export class CallIds {
  private readonly assigned: string[] = [];
  private readonly used: Set<string>;

  constructor(messages: ChatMessage[]) {
    this.used = new Set();
    for (const message of messages) {
      if (message.role === 'tool_result') this.used.add(message.tool_call_id);
      else if (message.role === 'assistant') for (const block of message.content) if (block.type === 'tool_call') this.used.add(block.id);
    }
  }

  /** The id of the `index`-th call of this generation (stable across the partial and final content). */
  of(index: number, providerId: string | undefined): string {
    const known = this.assigned[index];
    if (known) return known;
    const id = providerId && PROVIDER_CALL_ID.test(providerId) && !this.used.has(providerId) ? providerId : freshCallId();
    this.used.add(id);
    this.assigned[index] = id;
    return id;
  }
}

function freshCallId(): string {
  return `call_${randomBytes(12)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')}`;
}

/** A provider's tool call as the session's function_call block. */
function toFunctionCall(block: Extract<GeneratedBlock, { type: 'tool_call' }>): FunctionCall {
  if (block.name !== AGENT_TOOL) {
    return {
      id: block.id,
      function_id: AGENT_TOOL,
      arguments: block.arguments,
      invalid: `there is no tool "${block.name}"; call functions with ${AGENT_TOOL}`,
    };
  }
  const args = (block.arguments ?? {}) as { function?: unknown; payload?: unknown; _raw?: unknown };
  if (typeof args._raw === 'string')
    return { id: block.id, function_id: AGENT_TOOL, arguments: args, invalid: 'the arguments are not valid JSON' };
  if (typeof args.function !== 'string' || !args.function) {
    return {
      id: block.id,
      function_id: AGENT_TOOL,
      arguments: args,
      invalid: 'the call names no function (give "function": "<function id>")',
    };
  }
  return { id: block.id, function_id: args.function, arguments: args.payload ?? {} };
}

/** The blocks with each tool call under the id `ids` gives it. */
function withCallIds(blocks: GeneratedBlock[], ids: CallIds): GeneratedBlock[] {
  let k = 0;
  return blocks.map((block) => (block.type === 'tool_call' ? { ...block, id: ids.of(k++, block.id) } : block));
}

function toSessionBlocks(blocks: GeneratedBlock[]): ContentBlock[] {
  return blocks.map((block): ContentBlock => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    if (block.type === 'thinking')
      return block.signature ? { type: 'thinking', text: block.text, signature: block.signature } : { type: 'thinking', text: block.text };
    const call = toFunctionCall(block);
    return { type: 'function_call', id: call.id, function_id: call.function_id, arguments: call.arguments };
  });
}

export class Generation {
  private readonly requestId: string;
  private aborted = false;
  private readonly blocks: Array<GeneratedBlock & { raw?: string }> = [];
  private reader?: { close(): void };
  private signalAbort!: () => void;
  private readonly aborting = new Promise<typeof ABORTED>((resolve) => {
    this.signalAbort = () => resolve(ABORTED);
  });
  firstTextAt?: number;
  private framesSeen = 0;
  private readonly callIds: CallIds;
  /** The cap on this answer's bytes (llm-router `max_answer_bytes`), read while the stream opens. */
  private readonly limit: Promise<number>;
  private readonly streamed = new StreamBytes();
  /** Set when the stream outgrew the cap: the generation ends with the cap's error. */
  private cappedAt?: number;

  constructor(
    private readonly client: EngClient,
    private readonly request: GenerationRequest,
    private readonly span: WorkerSpan,
    /** The stream's channel, when the caller made it ahead (in parallel with its own reads). */
    private readonly channel?: Promise<Channel>,
    /** The assistant entry is appended after this settles (the user message still being stored). */
    private readonly after?: Promise<unknown>,
  ) {
    this.requestId = `${request.turnId}:${request.step}`;
    this.callIds = new CallIds(request.messages);
    this.limit = answerLimit(client);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.signalAbort();
    this.client.call('router::abort', { request_id: this.requestId }, { timeoutMs: 5000 }).catch(() => undefined);
  }

  async run(): Promise<GenerationOutcome> {
    const r = this.request;
    const origin = { turn_id: r.turnId, step: r.step };
    const entry = new AssistantEntry(this.client, r.sessionId, r.entryId, { model: r.model, provider: r.provider }, origin, this.after);
    let result: GenerationResult | undefined;
    let failure: string | undefined;
    try {
      const channel = await (this.channel ?? this.client.createChannel(1024));
      this.reader = channel.reader;
      const reading = this.readFrames(channel.reader, entry);
      const chat = this.client.call<GenerationResult>(
        'router::chat',
        {
          model: r.model,
          provider: r.provider,
          request_id: this.requestId,
          messages: r.messages,
          system: r.system,
          tools: r.tools,
          thinking_level: r.thinking_level,
          provider_options: r.provider_options,
          writer_ref: channel.writerRef,
        },
        { timeoutMs: 330_000 },
      );
      result = await this.settle(chat);
      // frames already written still arrive and the channel closes after the last one; a provider
      // that never wrote (it failed before streaming) leaves nothing to wait for
      await Promise.race([reading, sleep(this.framesSeen ? 1000 : 50)]);
    } catch (err) {
      failure = (err as Error).message ?? String(err);
    } finally {
      this.reader?.close();
    }
    await entry.ready().catch((err) => {
      failure ??= `the assistant entry could not be stored: ${(err as Error).message}`;
    });

    const final = result?.content.length ? withCallIds(result.content, this.callIds) : undefined;
    const content = toSessionBlocks(final ?? this.partial());
    let outcome: GenerationOutcome;
    if (this.cappedAt !== undefined)
      outcome = {
        content: toSessionBlocks(this.partial()),
        stop_reason: 'error',
        error_message: answerTooLarge(this.cappedAt),
        error_kind: ANSWER_TOO_LARGE_KIND,
        usage: result?.usage,
        calls: [],
      };
    else if (this.aborted) outcome = { content, stop_reason: 'aborted', usage: result?.usage, calls: [] };
    else if (result?.ok) {
      const calls = ((final ?? []).filter((b) => b.type === 'tool_call') as Array<Extract<GeneratedBlock, { type: 'tool_call' }>>).map(
        toFunctionCall,
      );
      outcome = { content, stop_reason: calls.length ? 'function_call' : result.stop_reason, usage: result.usage, calls };
    } else {
      outcome = {
        content,
        stop_reason: 'error',
        error_message: result?.error?.message ?? failure ?? 'the generation failed',
        error_kind: result?.error?.kind ?? 'transient',
        usage: result?.usage,
        calls: [],
      };
    }
    if (outcome.usage) {
      this.span
        .setAttribute('gen_ai.usage.input_tokens', outcome.usage.input ?? 0)
        .setAttribute('gen_ai.usage.output_tokens', outcome.usage.output ?? 0);
    }
    this.span.setAttribute('eng.stop_reason', outcome.stop_reason);
    await entry.finish(outcome.content, {
      stop_reason: outcome.stop_reason,
      native_stop_reason: result?.native_stop_reason,
      error_message: outcome.error_message,
      error_kind: outcome.error_kind,
      usage: outcome.usage,
    });
    return outcome;
  }

  /** The router's answer, or — once aborted — whatever came within a grace period. */
  private async settle(chat: Promise<GenerationResult>): Promise<GenerationResult | undefined> {
    if (!this.aborted) {
      const raced = await Promise.race([chat, this.aborting]);
      if (raced !== ABORTED) return raced as GenerationResult;
    }
    return Promise.race([chat.catch(() => undefined), sleep(ABORT_GRACE_MS).then(() => undefined)]);
  }

  private async readFrames(reader: AsyncIterable<string | Uint8Array>, entry: AssistantEntry): Promise<void> {
    const limit = await this.limit;
    try {
      for await (const raw of reader) {
        if (typeof raw !== 'string') continue;
        this.framesSeen++;
        let frame: StreamFrame;
        try {
          frame = JSON.parse(raw) as StreamFrame;
        } catch {
          continue;
        }
        if (this.streamed.add(frame as { type: string }) > limit + ROUTER_SLACK_BYTES) {
          this.cutOff(limit);
          return;
        }
        if (this.apply(frame)) entry.set(toSessionBlocks(this.partial()));
      }
    } catch {
      // the channel closed early (abort, provider gone): the result decides
    }
  }

  /** The answer outgrew the cap (a provider that ignores it): stop reading and stop the provider. */
  private cutOff(limit: number): void {
    this.cappedAt = limit;
    this.reader?.close();
    this.signalAbort();
    this.client.call('router::abort', { request_id: this.requestId }, { timeoutMs: 5000 }).catch(() => undefined);
  }

  /** Fold one frame into the partial content; true when the content changed. */
  private apply(frame: StreamFrame): boolean {
    switch (frame.type) {
      case 'text_delta': {
        const block = this.blockAt(frame.index, () => ({ type: 'text', text: '' }));
        if (block.type === 'text') block.text += frame.delta;
        this.firstTextAt ??= Date.now();
        return true;
      }
      case 'thinking_delta': {
        const block = this.blockAt(frame.index, () => ({ type: 'thinking', text: '' }));
        if (block.type === 'thinking') block.text += frame.delta;
        return true;
      }
      case 'thinking_signature': {
        const block = this.blocks[frame.index];
        if (block?.type === 'thinking') block.signature = (block.signature ?? '') + frame.signature;
        return false;
      }
      case 'toolcall_start':
        this.blocks[frame.index] = { type: 'tool_call', id: frame.id, name: frame.name, arguments: {}, raw: '' };
        return true;
      case 'toolcall_delta': {
        const block = this.blocks[frame.index];
        if (block?.type === 'tool_call') {
          block.raw = (block.raw ?? '') + frame.delta;
          block.arguments = { _streaming: block.raw };
        }
        return true;
      }
      case 'toolcall_end':
        this.blocks[frame.index] = { type: 'tool_call', id: frame.id, name: frame.name, arguments: frame.arguments };
        return true;
      default:
        return false;
    }
  }

  private blockAt(index: number, create: () => GeneratedBlock): GeneratedBlock {
    let block = this.blocks[index];
    if (!block) {
      block = create();
      this.blocks[index] = block;
    }
    return block;
  }

  /** The content so far; a tool call still streaming shows its raw tail (`_streaming`). */
  private partial(): GeneratedBlock[] {
    const blocks = this.blocks.filter(Boolean).map((b): GeneratedBlock => {
      if (b.type !== 'tool_call' || b.raw === undefined) return b;
      return { type: 'tool_call', id: b.id, name: b.name, arguments: { _streaming: b.raw } };
    });
    return withCallIds(blocks, this.callIds);
  }
}

const ABORTED = Symbol('aborted');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
