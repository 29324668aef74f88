import type Anthropic from '@anthropic-ai/sdk';
import type { ChatMessage, ToolSpec } from '../../router/types.ts';

type Param = Anthropic.Messages.MessageParam;
type Block = Anthropic.Messages.ContentBlockParam;
type ImageMime = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

function image(mime: string, data: string): Block {
  return { type: 'image', source: { type: 'base64', media_type: mime as ImageMime, data } };
}

/**
 * The provider-neutral conversation as Messages API turns. Tool results travel in user turns, and
 * turns of the same role are merged, since the API wants user and assistant to alternate.
 * Thinking goes back only when it carries its signature (the API rejects unsigned thinking).
 */
export function toAnthropicMessages(messages: ChatMessage[]): Param[] {
  const out: Param[] = [];
  const add = (role: 'user' | 'assistant', blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      add(
        'user',
        message.content.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : image(b.mime, b.data))),
      );
    } else if (message.role === 'assistant') {
      const blocks: Block[] = [];
      for (const b of message.content) {
        if (b.type === 'text' && b.text) blocks.push({ type: 'text', text: b.text });
        else if (b.type === 'thinking' && b.signature) blocks.push({ type: 'thinking', thinking: b.text, signature: b.signature });
        else if (b.type === 'tool_call')
          blocks.push({ type: 'tool_use', id: b.id, name: b.name, input: (b.arguments ?? {}) as Record<string, unknown> });
      }
      add('assistant', blocks);
    } else {
      add('user', [
        {
          type: 'tool_result',
          tool_use_id: message.tool_call_id,
          is_error: message.is_error || undefined,
          content: message.content.map((b) =>
            b.type === 'text' ? { type: 'text' as const, text: b.text } : (image(b.mime, b.data) as Anthropic.Messages.ImageBlockParam),
          ),
        },
      ]);
    }
  }
  return out;
}

export function toAnthropicTools(tools: ToolSpec[] | undefined): Anthropic.Messages.Tool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as Anthropic.Messages.Tool.InputSchema,
  }));
}
