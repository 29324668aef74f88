import { FakeApi, type RecordedRequest, type Reply, type SseEvent, tokens } from './http.ts';

// A fake Anthropic Messages API: `GET /v1/models` and streaming `POST /v1/messages` with the
// named SSE events the API sends (message_start, content_block_start/delta/stop with text,
// thinking + signature and tool_use input_json deltas, ping, message_delta, message_stop, error).

export interface AnthropicTurn {
  thinking?: string;
  signature?: string;
  text?: string;
  toolUses?: Array<{ id: string; name: string; input: unknown }>;
  stop?: 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';
  usage?: { input_tokens: number; output_tokens: number };
  delayMs?: number;
  firstByteDelayMs?: number;
  stallAfter?: number;
  /** Send an `error` event after this many events instead of finishing (overloaded mid-stream). */
  errorAfter?: number;
}

export class FakeAnthropic extends FakeApi {
  apiKey?: string;
  models?: Array<{ id: string; display_name: string }> = [
    { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5' },
    { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' },
  ];
  private seq = 0;

  constructor() {
    super((api, request) => (api as FakeAnthropic).dispatch(request));
  }

  get baseUrl(): string {
    return this.origin;
  }

  turn(turn: AnthropicTurn): void {
    this.enqueue(this.reply(turn));
  }

  error(status: number, type: string, message: string, headers: Record<string, string> = {}): void {
    this.enqueue(anthropicError(status, type, message, headers));
  }

  messageRequests(): RecordedRequest[] {
    return this.generationRequests('/v1/messages');
  }

  reply(turn: AnthropicTurn, model = 'claude-sonnet-4-5-20250929'): Reply {
    const id = `msg_fake${++this.seq}`;
    const usage = turn.usage ?? { input_tokens: 20, output_tokens: tokens(turn.text ?? '').length + 1 };
    const events: SseEvent[] = [];
    const ev = (event: string, data: Record<string, unknown>) => events.push({ event, data: { type: event, ...data } });
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          service_tier: 'standard',
        },
      },
    });
    let index = 0;
    if (turn.thinking !== undefined) {
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of tokens(turn.thinking)) ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      ev('content_block_delta', {
        index,
        delta: { type: 'signature_delta', signature: turn.signature ?? 'EqQBCkYIBxgCKkD-fake-signature' },
      });
      ev('content_block_stop', { index });
      index++;
    }
    if (turn.text !== undefined) {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      events.push({ event: 'ping', data: { type: 'ping' } });
      for (const piece of tokens(turn.text)) ev('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      ev('content_block_stop', { index });
      index++;
    }
    for (const use of turn.toolUses ?? []) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: use.id, name: use.name, input: {} } });
      const json = JSON.stringify(use.input);
      for (let at = 0; at < json.length; at += 10)
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(at, at + 10) } });
      ev('content_block_stop', { index });
      index++;
    }
    const stop = turn.stop ?? (turn.toolUses?.length ? 'tool_use' : 'end_turn');
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    ev('message_stop', {});
    if (turn.errorAfter !== undefined) {
      events.splice(turn.errorAfter);
      events.push({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    }
    return {
      kind: 'sse',
      events,
      delayMs: turn.delayMs,
      firstByteDelayMs: turn.firstByteDelayMs,
      stallAfter: turn.stallAfter,
      headers: { 'request-id': `req_${id}`, 'anthropic-organization-id': 'org-fake' },
    };
  }

  private dispatch(request: RecordedRequest): Reply | undefined {
    // the 1.x client sends the key as a bearer token; older clients as x-api-key: both are the key
    const given = request.headers['x-api-key'] ?? String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (this.apiKey && given !== this.apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
    if (request.method === 'GET' && request.path === '/v1/models') {
      if (!this.models) return undefined;
      const data = this.models.map((m) => ({ type: 'model', id: m.id, display_name: m.display_name, created_at: '2025-09-29T00:00:00Z' }));
      return {
        kind: 'json',
        status: 200,
        body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
      };
    }
    if (request.method === 'POST' && request.path === '/v1/messages') return this.next(request);
    return undefined;
  }
}

export function anthropicError(status: number, type: string, message: string, headers: Record<string, string> = {}): Reply {
  return {
    kind: 'json',
    status,
    body: { type: 'error', error: { type, message }, request_id: 'req_fake_error' },
    headers: { 'request-id': 'req_fake_error', ...headers },
  };
}
