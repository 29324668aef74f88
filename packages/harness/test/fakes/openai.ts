import { FakeApi, type RecordedRequest, type Reply, type SseEvent, tokens } from './http.ts';

// A fake OpenAI-compatible server: `GET /v1/models` and streaming `POST /v1/chat/completions`,
// with chunks shaped exactly as the OpenAI API sends them (role chunk, content deltas, tool call
// deltas, a finish chunk, the usage chunk when asked, `data: [DONE]`) and its error bodies.

export interface OpenAITurn {
  text?: string;
  /** `reasoning_content` deltas (DeepSeek, llama.cpp). */
  reasoning?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: unknown }>;
  finish?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** ms between chunks (a slow stream). */
  delayMs?: number;
  firstByteDelayMs?: number;
  /** Stop sending after this many chunks and hold the stream open (abort tests). */
  stallAfter?: number;
  /** A very large answer after `text`: `bytes` ASCII characters in content deltas of `chunkChars` (default 4096) each. */
  bulkText?: { bytes: number; chunkChars?: number };
}

export class FakeOpenAI extends FakeApi {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** `GET /v1/models` ids; undefined: the route answers 404 as servers without it do. */
  models?: string[] = ['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small'];
  private seq = 0;

  constructor() {
    super((api, request) => (api as FakeOpenAI).dispatch(request));
  }

  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** Queue the reply to the next chat completion. */
  turn(turn: OpenAITurn): void {
    this.enqueue(this.reply(turn));
  }

  /** Queue an HTTP error exactly as the API answers it. */
  error(
    status: number,
    message: string,
    type = 'invalid_request_error',
    code: string | null = null,
    headers: Record<string, string> = {},
  ): void {
    this.enqueue(errorReply(status, message, type, code, headers));
  }

  chatRequests(): RecordedRequest[] {
    return this.generationRequests('/chat/completions');
  }

  reply(turn: OpenAITurn, model = 'gpt-4o'): Reply {
    const id = `chatcmpl-fake${++this.seq}`;
    const base = {
      id,
      object: 'chat.completion.chunk',
      created: 1_763_900_000,
      model,
      system_fingerprint: 'fp_fake',
      service_tier: 'default',
    };
    const chunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}): SseEvent => ({
      data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null, ...extra },
    });
    const events: SseEvent[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const piece of tokens(turn.reasoning ?? '')) events.push(chunk({ reasoning_content: piece }));
    for (const piece of tokens(turn.text ?? '')) events.push(chunk({ content: piece }));
    if (turn.bulkText) {
      // one shared string per size: a many-MB answer costs the fake little memory
      const size = turn.bulkText.chunkChars ?? 4096;
      const piece = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(size / 27)).slice(0, size);
      for (let at = 0; at < turn.bulkText.bytes; at += size)
        events.push(chunk({ content: at + size <= turn.bulkText.bytes ? piece : piece.slice(0, turn.bulkText.bytes - at) }));
    }
    (turn.toolCalls ?? []).forEach((call, index) => {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (let at = 0; at < args.length; at += 12)
        events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(at, at + 12) } }] }));
    });
    const finish = turn.finish ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop');
    events.push(chunk({}, finish));
    const usage = turn.usage ?? { prompt_tokens: 12, completion_tokens: tokens(turn.text ?? '').length + 1 };
    events.push({
      data: {
        ...base,
        choices: [],
        usage: {
          ...usage,
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
      },
    });
    events.push({ data: '[DONE]', raw: true });
    return {
      kind: 'sse',
      events,
      delayMs: turn.delayMs,
      firstByteDelayMs: turn.firstByteDelayMs,
      stallAfter: turn.stallAfter,
      headers: { 'x-request-id': `req_${id}` },
    };
  }

  private dispatch(request: RecordedRequest): Reply | undefined {
    if (this.apiKey && request.headers.authorization !== `Bearer ${this.apiKey}`) {
      const given = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      // the real message echoes a masked key; ours echoes it whole to prove it never reaches a log
      return errorReply(
        401,
        `Incorrect API key provided: ${given}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (request.method === 'GET' && request.path === '/v1/models') {
      if (!this.models) return undefined;
      return {
        kind: 'json',
        status: 200,
        body: { object: 'list', data: this.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) },
      };
    }
    if (request.method === 'POST' && request.path === '/v1/chat/completions') return this.next(request);
    return undefined;
  }
}

export function errorReply(
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
): Reply {
  return {
    kind: 'json',
    status,
    body: { error: { message, type, param: null, code } },
    headers: { 'x-request-id': 'req_fake_error', ...headers },
  };
}

/** A stream whose data is not JSON halfway through (a broken proxy, a buggy server). */
export function malformedOpenAIStream(): Reply {
  const base = { id: 'chatcmpl-bad', object: 'chat.completion.chunk', created: 1_763_900_000, model: 'gpt-4o' };
  return {
    kind: 'sse',
    events: [
      { data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] } },
      { data: { ...base, choices: [{ index: 0, delta: { content: 'Partial ' }, finish_reason: null }] } },
      { data: '{"id":"chatcmpl-bad","choices":[{"index":0,"delta":{"content":"bro', raw: true },
    ],
  };
}
