import type { AgentMessage, ContentBlock } from '../router/types.ts';

// spec: console-worker §2.6 — the summary template's eight sections, and how a transcript is
// written out for the summariser (long tool outputs clipped: the summary needs their gist).

export const SECTIONS = [
  'Goal',
  'Constraints',
  'Progress',
  'Key Decisions',
  'Actions Taken',
  'Next Steps',
  'Critical Context',
  'Relevant Files',
];

export const SUMMARISER_SYSTEM = [
  'You compact a conversation between a user and an AI agent so the agent can continue the work without the earlier messages.',
  'Write a faithful, dense summary in Markdown with exactly these sections, in this order, each as a "## " heading:',
  ...SECTIONS.map((s) => `- ${s}`),
  'Keep concrete facts: names, ids, numbers, function ids called and what they returned, file paths, errors and decisions.',
  'Write "None." under a section with nothing to say. Do not address the user; do not continue the conversation.',
].join('\n');

const CLIP = 2000;

function clip(text: string, limit = CLIP): string {
  return text.length > limit ? `${text.slice(0, limit)}… [${text.length - limit} more characters]` : text;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '[unserialisable]';
  }
}

function blocksText(blocks: ContentBlock[]): string {
  return blocks
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'image') return `[image ${b.mime}]`;
      if (b.type === 'file') return `[file ${b.name}]`;
      if (b.type === 'thinking') return '';
      if (b.type === 'function_call') return `[called ${b.function_id} with ${clip(json(b.arguments), 500)}]`;
      if (b.type === 'function_result') return blocksText(b.content);
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

export function renderMessage(message: AgentMessage): string {
  switch (message.role) {
    case 'user':
      return `USER: ${clip(blocksText(message.content), CLIP * 2)}`;
    case 'assistant':
      return `ASSISTANT: ${clip(blocksText(message.content), CLIP * 2)}`;
    case 'function_result':
      return `RESULT of ${message.function_id}${message.is_error ? ' (error)' : ''}: ${clip(blocksText(message.content))}`;
    default:
      return `NOTE (${message.custom_type}): ${clip(blocksText(message.content))}`;
  }
}

export function summaryRequest(transcript: string, previousSummary: string | undefined): string {
  const parts: string[] = [];
  if (previousSummary) parts.push(`<previous-summary>\n${previousSummary}\n</previous-summary>`);
  parts.push(`<conversation>\n${transcript}\n</conversation>`);
  parts.push(
    previousSummary
      ? 'Update the previous summary with the conversation that followed it. Output the complete updated summary with the eight sections.'
      : 'Summarise the conversation above with the eight sections.',
  );
  return parts.join('\n\n');
}
