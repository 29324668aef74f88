import type { EngClient } from '@eng/sdk';
import type { AgentMessage, ChatMessage, ContentBlock, GeneratedBlock } from '../router/types.ts';

// The conversation a generation sees: the session's active path, anchored on the latest
// `compaction` entry (its summary stands in for everything before `tail_start_entry_id`), turned
// into the provider-neutral shape where function calls are calls of the one `agent_trigger` tool.

export const AGENT_TOOL = 'agent_trigger';

export interface TranscriptItem {
  entry_id: string;
  parent_id?: string | null;
  message?: AgentMessage;
  custom?: { custom_type: string; data: unknown };
}

export interface Compaction {
  entry_id: string;
  summary: string;
  tail_start_entry_id: string | null;
}

export interface Context {
  /** Messages after the anchor, with their entry ids. */
  items: Array<{ entry_id: string; message: AgentMessage }>;
  compaction?: Compaction;
}

export async function readTranscript(client: EngClient, sessionId: string): Promise<TranscriptItem[]> {
  const out: TranscriptItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call<{ messages: TranscriptItem[]; next_cursor?: string }>(
      'session::messages',
      { session_id: sessionId, limit: 500, include_custom: true, ...(cursor ? { cursor } : {}) },
      { timeoutMs: 15_000 },
    );
    out.push(...page.messages);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** The messages a generation starts from: after the latest compaction, or all of them. */
export function contextOf(transcript: TranscriptItem[]): Context {
  let anchor = -1;
  let compaction: Compaction | undefined;
  transcript.forEach((item, index) => {
    const data =
      item.custom?.custom_type === 'compaction' ? (item.custom.data as { summary?: unknown; tail_start_entry_id?: unknown }) : undefined;
    if (data && typeof data.summary === 'string' && data.summary) {
      anchor = index;
      compaction = {
        entry_id: item.entry_id,
        summary: data.summary,
        tail_start_entry_id: typeof data.tail_start_entry_id === 'string' ? data.tail_start_entry_id : null,
      };
    }
  });
  let start = anchor + 1;
  if (compaction?.tail_start_entry_id) {
    const at = transcript.findIndex((item) => item.entry_id === compaction?.tail_start_entry_id);
    if (at >= 0) start = at;
  }
  const items = transcript
    .slice(start)
    .filter((item): item is { entry_id: string; message: AgentMessage } => Boolean(item.message))
    .filter((item) => item.message.role !== 'custom');
  return compaction ? { items, compaction } : { items };
}

type InputBlock = Extract<ContentBlock, { type: 'text' } | { type: 'image' }>;

function userBlocks(content: ContentBlock[]): InputBlock[] {
  const out: InputBlock[] = [];
  for (const block of content) {
    if (block.type === 'text') out.push({ type: 'text', text: block.text });
    else if (block.type === 'image' && block.data) out.push({ type: 'image', mime: block.mime, data: block.data });
    else if (block.type === 'file')
      out.push({ type: 'text', text: `<attached-file name="${block.name}" mime="${block.mime}" size="${block.size}" />` });
  }
  return out;
}

/**
 * Session messages → provider-neutral messages. A function call's result goes right after the
 * assistant message that made it (a message the user sent while it ran comes after), and a call
 * left without a result (an interrupted turn) gets an error result, as the APIs require.
 */
export function toChatMessages(context: Context): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (context.compaction) {
    out.push({
      role: 'user',
      content: [
        {
          type: 'text',
          text: `<conversation-summary>\nThe earlier conversation, summarised:\n${context.compaction.summary}\n</conversation-summary>`,
        },
      ],
    });
  }
  const results = new Map<string, Extract<AgentMessage, { role: 'function_result' }>>();
  for (const { message } of context.items) if (message.role === 'function_result') results.set(message.function_call_id, message);
  const delivered = new Set<string>();
  for (const { message } of context.items) {
    if (message.role === 'user') {
      const content = userBlocks(message.content);
      if (content.length) out.push({ role: 'user', content });
    } else if (message.role === 'assistant') {
      const content: GeneratedBlock[] = [];
      for (const block of message.content) {
        if (block.type === 'text' && block.text) content.push({ type: 'text', text: block.text });
        else if (block.type === 'thinking')
          content.push({ type: 'thinking', text: block.text, ...(block.signature ? { signature: block.signature } : {}) });
        else if (block.type === 'function_call') {
          content.push({
            type: 'tool_call',
            id: block.id,
            name: AGENT_TOOL,
            arguments: { function: block.function_id, payload: block.arguments ?? {} },
          });
        }
      }
      if (content.length === 0) continue;
      out.push({ role: 'assistant', content });
      for (const block of content) {
        if (block.type !== 'tool_call') continue;
        const result = results.get(block.id);
        delivered.add(block.id);
        out.push({
          role: 'tool_result',
          tool_call_id: block.id,
          tool_name: AGENT_TOOL,
          content: result ? userBlocks(result.content) : [{ type: 'text', text: 'No result: the call was interrupted.' }],
          is_error: result ? result.is_error : true,
        });
      }
    }
    // function results were placed after their calls; orphans (their call was compacted away) are dropped
  }
  return out;
}
