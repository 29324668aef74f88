import type Anthropic from '@anthropic-ai/sdk';
import type { GenerationResult, Model, ProviderStreamRequest, StopReason, Usage } from '../../router/types.ts';
import type { GenerationOutput } from '../output.ts';
import { thinkingBudget } from './catalog.ts';
import { toAnthropicMessages, toAnthropicTools } from './convert.ts';

const STOP: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'end',
  pause_turn: 'end',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'function_call',
};

/**
 * One streamed Messages API call through the official client (its raw event stream), mapped onto
 * the generation output: text, thinking (with signature) and tool use blocks keep the API's indices.
 */
export async function streamMessage(
  client: Anthropic,
  request: ProviderStreamRequest,
  model: Model | undefined,
  defaultMaxTokens: number,
  output: GenerationOutput,
  signal: AbortSignal,
): Promise<GenerationResult> {
  let maxTokens = request.max_output_tokens ?? defaultMaxTokens;
  const params: Anthropic.Messages.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: maxTokens,
    messages: toAnthropicMessages(request.messages),
    stream: true,
  };
  if (request.system) params.system = request.system;
  const tools = toAnthropicTools(request.tools);
  if (tools) params.tools = tools;
  const budget = thinkingBudget(model, request.thinking_level);
  if (budget) {
    // the budget must stay below max_tokens
    if (maxTokens <= budget) maxTokens = Math.min(budget + 4096, model?.max_output_tokens ?? budget + 4096);
    params.max_tokens = maxTokens;
    params.thinking = { type: 'enabled', budget_tokens: Math.min(budget, maxTokens - 1) };
  }

  const stream = await client.messages.create(params, { signal });
  let usage: Usage = {};
  let stop: string | undefined;
  let sawStop = false;
  const kinds = new Map<number, string>();

  for await (const event of stream) {
    switch (event.type) {
      case 'message_start':
        usage = mergeUsage(usage, event.message.usage);
        break;
      case 'content_block_start': {
        const block = event.content_block;
        kinds.set(event.index, block.type);
        if (block.type === 'tool_use') output.toolCallStart(event.index, block.id, block.name);
        else if (block.type === 'text' && block.text) output.textDelta(event.index, block.text);
        else if (block.type === 'thinking' && block.thinking) output.thinkingDelta(event.index, block.thinking);
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta') output.textDelta(event.index, delta.text);
        else if (delta.type === 'thinking_delta') output.thinkingDelta(event.index, delta.thinking);
        else if (delta.type === 'signature_delta') output.thinkingSignature(event.index, delta.signature);
        else if (delta.type === 'input_json_delta') output.toolCallDelta(event.index, delta.partial_json);
        break;
      }
      case 'content_block_stop':
        if (kinds.get(event.index) === 'tool_use') output.toolCallEnd(event.index);
        break;
      case 'message_delta':
        if (event.delta.stop_reason) stop = event.delta.stop_reason;
        usage = mergeUsage(usage, event.usage);
        break;
      case 'message_stop':
        sawStop = true;
        break;
    }
  }
  if (signal.aborted) return output.fail('aborted', 'transient', 'generation aborted', usage);
  if (!sawStop || !stop) return output.fail('error', 'transient', 'the stream ended before message_stop', usage);
  if (stop === 'refusal') return output.fail('error', 'permanent', 'the model refused to answer', usage);
  if (stop === 'model_context_window_exceeded' && output.content.length === 0) {
    return output.fail('error', 'context_overflow', 'the conversation exceeds the model context window', usage);
  }
  return output.done(STOP[stop] ?? 'end', stop, usage);
}

function mergeUsage(
  usage: Usage,
  u: {
    input_tokens?: number | null;
    output_tokens?: number | null;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
  },
): Usage {
  const out = { ...usage };
  if (typeof u.input_tokens === 'number') out.input = u.input_tokens;
  if (typeof u.output_tokens === 'number') out.output = u.output_tokens;
  if (typeof u.cache_read_input_tokens === 'number' && u.cache_read_input_tokens > 0) out.cache_read = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === 'number' && u.cache_creation_input_tokens > 0)
    out.cache_write = u.cache_creation_input_tokens;
  return out;
}
