import type OpenAI from 'openai';
import type { ChatMessage, ToolSpec } from '../../router/types.ts';

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** The provider-neutral conversation as Chat Completions messages. Thinking is not sent back. */
export function toOpenAIMessages(system: string | undefined, messages: ChatMessage[]): Param[] {
  const out: Param[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const message of messages) {
    if (message.role === 'user') {
      const parts: UserPart[] = message.content.map((block) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : { type: 'image_url', image_url: { url: `data:${block.mime};base64,${block.data}` } },
      );
      const onlyText = parts.every((p) => p.type === 'text');
      out.push({ role: 'user', content: onlyText ? parts.map((p) => (p as { text: string }).text).join('\n') : parts });
    } else if (message.role === 'assistant') {
      const text = message.content
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join('');
      const calls = message.content.filter((b) => b.type === 'tool_call');
      const param: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text || null };
      if (calls.length) {
        param.tool_calls = calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
        }));
      }
      out.push(param);
    } else {
      const text = message.content.map((b) => (b.type === 'text' ? b.text : `[image ${b.mime}]`)).join('\n');
      out.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.is_error ? `Error: ${text}` : text });
    }
  }
  return out;
}

export function toOpenAITools(tools: ToolSpec[] | undefined): OpenAI.Chat.Completions.ChatCompletionTool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}
