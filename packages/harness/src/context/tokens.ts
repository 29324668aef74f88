import type { AgentMessage, ContentBlock } from '../router/types.ts';

// spec: console-worker §2.9 — the chat stack's token estimate: characters / 4 over text, thinking,
// function inputs and outputs and summaries. Images count as a flat amount.

const IMAGE_TOKENS = 800;

export function estimateText(text: string | undefined | null): number {
  return text ? Math.ceil(text.length / 4) : 0;
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value ?? null).length;
  } catch {
    return 0;
  }
}

export function estimateBlocks(blocks: ContentBlock[] | undefined): number {
  let tokens = 0;
  for (const block of blocks ?? []) {
    switch (block.type) {
      case 'text':
      case 'thinking':
        tokens += estimateText(block.text);
        break;
      case 'image':
        tokens += IMAGE_TOKENS;
        break;
      case 'function_call':
        tokens += Math.ceil((block.function_id.length + jsonLength(block.arguments)) / 4);
        break;
      case 'function_result':
        tokens += estimateBlocks(block.content);
        break;
      case 'file':
        tokens += 20;
        break;
    }
  }
  return tokens;
}

/** A few tokens of framing per message, as the APIs count them. */
export function estimateMessage(message: AgentMessage): number {
  return 4 + estimateBlocks(message.content);
}

export function estimateMessages(messages: AgentMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateMessage(m), 0);
}
