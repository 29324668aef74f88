import type { EngClient } from '@eng/sdk';
import { z } from 'zod';
import type { AgentMessage, GenerationResult, Model } from '../router/types.ts';
import { domainError, parseRequest } from '../shared/errors.ts';
import { renderMessage, SUMMARISER_SYSTEM, summaryRequest } from './summary-prompt.ts';
import { estimateMessages, estimateText } from './tokens.ts';

// spec: console-worker §2.6 — `context::compact`: summarise everything before the last
// `tail_turns` user turns through the router, one compaction per lease key at a time.

const CompactInput = z.object({
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant', 'function_result', 'custom'], {
        error: 'role must be one of user, assistant, function_result, custom',
      }),
      content: z.array(z.looseObject({ type: z.string() }), { error: 'content must be an array of content blocks' }),
    }),
    {
      error: 'messages must be an array of messages',
    },
  ),
  model: z.object(
    {
      id: z.string({ error: 'model.id is required' }).min(1, { error: 'model.id must not be empty' }),
      provider: z.string().min(1).optional(),
      limits: z.object({ context_window: z.number().int().positive(), max_output_tokens: z.number().int().positive() }).optional(),
    },
    { error: 'model must be an object {id, provider?, limits?}' },
  ),
  options: z
    .object({
      tail_turns: z.number().int().min(0).max(1000).optional(),
      previous_summary: z.string().optional(),
      preserve_recent_tokens: z.number().int().positive().optional(),
      lease_key: z.string().min(1).optional(),
    })
    .optional(),
});

export type CompactResult =
  | {
      status: 'ok';
      summary: string;
      tail_start_index: number | null;
      tokens_before: number;
      tokens_after: number;
      used_prior_summary: boolean;
    }
  | { status: 'busy' }
  | { status: 'empty' }
  | { status: 'overflow'; reason?: string };

const SUMMARY_MAX_TOKENS = 4096;
/** The summariser's share of the window for one chunk of transcript. */
const CHUNK_SHARE = 0.6;
const LEASE_TTL_MS = 330_000;

export class Compactor {
  /** lease key → expiry; a crashed compaction never holds a session for longer than its budget. */
  private readonly leases = new Map<string, number>();

  constructor(private readonly client: EngClient) {}

  async compact(raw: unknown): Promise<CompactResult> {
    const input = parseRequest('context', 'context::compact', CompactInput, raw);
    const messages = input.messages as unknown as AgentMessage[];
    const options = input.options ?? {};
    if (messages.length === 0) return { status: 'empty' };
    const lease = options.lease_key;
    if (lease) {
      const held = this.leases.get(lease);
      if (held !== undefined && held > Date.now()) return { status: 'busy' };
      this.leases.set(lease, Date.now() + LEASE_TTL_MS);
    }
    try {
      return await this.run(messages, input.model, options);
    } finally {
      if (lease) this.leases.delete(lease);
    }
  }

  private async run(
    messages: AgentMessage[],
    modelRef: { id: string; provider?: string; limits?: { context_window: number; max_output_tokens: number } },
    options: { tail_turns?: number; previous_summary?: string; preserve_recent_tokens?: number },
  ): Promise<CompactResult> {
    const previous = options.previous_summary?.trim() || undefined;
    const tokensBefore = estimateMessages(messages) + estimateText(previous);
    const tailStart = this.tailStart(messages, options.tail_turns ?? 2, options.preserve_recent_tokens);
    const head = messages.slice(0, tailStart);
    const tail = messages.slice(tailStart);
    if (head.length === 0) return { status: 'empty' };

    const limits = modelRef.limits ?? (await this.limits(modelRef));
    const window = limits?.context_window ?? 32_768;
    const budget = Math.max(1024, Math.floor(window * CHUNK_SHARE) - SUMMARY_MAX_TOKENS);
    const tailTokens = estimateMessages(tail);
    // the tail is kept verbatim: if it alone cannot fit beside a summary, compaction cannot help
    if (tailTokens + SUMMARY_MAX_TOKENS > window) {
      return {
        status: 'overflow',
        reason: `the last ${tail.length} messages (~${tailTokens} tokens) do not fit the ${window}-token window`,
      };
    }

    let summary = previous;
    for (const chunk of chunks(head.map(renderMessage), budget - estimateText(previous))) {
      summary = await this.summarise(modelRef, summaryRequest(chunk, summary));
    }
    if (!summary) return { status: 'empty' };
    return {
      status: 'ok',
      summary,
      tail_start_index: tail.length ? tailStart : null,
      tokens_before: tokensBefore,
      tokens_after: estimateText(summary) + tailTokens,
      used_prior_summary: previous !== undefined,
    };
  }

  /** Index of the first message of the last `turns` user turns, shortened to fit `preserve` tokens. */
  private tailStart(messages: AgentMessage[], turns: number, preserve: number | undefined): number {
    const userAt = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    if (turns === 0 || userAt.length === 0) return messages.length;
    let k = Math.min(turns, userAt.length);
    let start = userAt[userAt.length - k] as number;
    while (preserve !== undefined && k > 1 && estimateMessages(messages.slice(start)) > preserve) {
      k--;
      start = userAt[userAt.length - k] as number;
    }
    return start;
  }

  private async limits(model: {
    id: string;
    provider?: string;
  }): Promise<{ context_window: number; max_output_tokens: number } | undefined> {
    try {
      const found = await this.client.call<Model | null>(
        'router::models::get',
        { model: model.id, provider: model.provider },
        { timeoutMs: 5000 },
      );
      return found ?? undefined;
    } catch {
      return undefined;
    }
  }

  private async summarise(model: { id: string; provider?: string }, prompt: string): Promise<string> {
    const result = await this.client.call<GenerationResult>(
      'router::complete',
      {
        model: model.id,
        provider: model.provider,
        system: SUMMARISER_SYSTEM,
        messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
        max_output_tokens: SUMMARY_MAX_TOKENS,
      },
      { timeoutMs: 320_000 },
    );
    const text = result.content
      .filter((b) => b.type === 'text')
      .map((b) => (b as { text: string }).text)
      .join('')
      .trim();
    if (!result.ok || !text) {
      throw domainError('context', 'summarize_failed', result.error?.message ?? 'the summariser returned no text');
    }
    return text;
  }
}

/** Rendered messages grouped into chunks of at most `budget` tokens (a message is never split). */
function chunks(rendered: string[], budget: number): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of rendered) {
    const tokens = estimateText(line);
    if (current.length && size + tokens > budget) {
      out.push(current.join('\n\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += tokens;
  }
  if (current.length) out.push(current.join('\n\n'));
  return out;
}
