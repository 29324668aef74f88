import type OpenAI from 'openai';
import type { GenerationResult, ProviderStreamRequest, StopReason, Usage } from '../../router/types.ts';
import type { GenerationOutput } from '../output.ts';
import { toOpenAIMessages, toOpenAITools } from './convert.ts';

const STOP: Record<string, StopReason> = { stop: 'end', length: 'length', tool_calls: 'function_call', function_call: 'function_call' };

/** Does this base URL point at OpenAI itself (which wants `max_completion_tokens`)? */
export function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * One streamed Chat Completion through the official client, mapped onto the generation output:
 * `content` → text, `reasoning_content` (DeepSeek, llama.cpp) → thinking, `tool_calls` → tool calls.
 */
export async function streamChatCompletion(
  client: OpenAI,
  request: ProviderStreamRequest,
  output: GenerationOutput,
  signal: AbortSignal,
  reasons = false,
): Promise<GenerationResult> {
  const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: toOpenAIMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  const tools = toOpenAITools(request.tools);
  if (tools) params.tools = tools;
  if (request.max_output_tokens) {
    if (isOpenAIHost(client.baseURL)) params.max_completion_tokens = request.max_output_tokens;
    else params.max_tokens = request.max_output_tokens;
  }
  const options = (request.provider_options?.openai ?? {}) as { reasoning_effort?: unknown };
  // a thinking level goes only to models known to reason (others answer 400); an explicit effort always goes
  const effort = typeof options.reasoning_effort === 'string' ? options.reasoning_effort : reasons ? request.thinking_level : undefined;
  if (effort && effort !== 'default') params.reasoning_effort = (effort === 'xhigh' ? 'high' : effort) as OpenAI.ReasoningEffort;

  const stream = await client.chat.completions.create(params, { signal });
  let nextIndex = 0;
  let open: { kind: 'text' | 'thinking'; index: number } | undefined;
  const toolBlocks = new Map<number, number>();
  let finish: string | undefined;
  let usage: Usage | undefined;

  const segment = (kind: 'text' | 'thinking'): number => {
    if (open?.kind !== kind) open = { kind, index: nextIndex++ };
    return open.index;
  };

  for await (const chunk of stream) {
    if (chunk.usage) usage = toUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta as (typeof choice.delta & { reasoning_content?: string | null; reasoning?: string | null }) | undefined;
    const reasoning = delta?.reasoning_content ?? delta?.reasoning;
    if (reasoning) output.thinkingDelta(segment('thinking'), reasoning);
    if (delta?.content) output.textDelta(segment('text'), delta.content);
    for (const call of delta?.tool_calls ?? []) {
      let index = toolBlocks.get(call.index);
      if (index === undefined) {
        index = nextIndex++;
        open = undefined;
        toolBlocks.set(call.index, index);
        output.toolCallStart(index, call.id || `call_${index}`, call.function?.name ?? '');
      }
      if (call.function?.arguments) output.toolCallDelta(index, call.function.arguments);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  for (const index of toolBlocks.values()) output.toolCallEnd(index);
  if (signal.aborted) return output.fail('aborted', 'transient', 'generation aborted', usage);
  if (finish === undefined) return output.fail('error', 'transient', 'the stream ended without a finish reason', usage);
  if (finish === 'content_filter') return output.fail('error', 'permanent', 'the response was stopped by the content filter', usage);
  const stop = toolBlocks.size > 0 ? 'function_call' : (STOP[finish] ?? 'end');
  return output.done(stop, finish, usage);
}

function toUsage(u: OpenAI.Completions.CompletionUsage): Usage {
  const usage: Usage = { input: u.prompt_tokens, output: u.completion_tokens };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached) usage.cache_read = cached;
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (reasoning) usage.reasoning = reasoning;
  return usage;
}
