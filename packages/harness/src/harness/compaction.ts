import type { EngClient, WorkerSpan } from '@eng/sdk';
import { estimateMessages, estimateText } from '../context/tokens.ts';
import type { Model } from '../router/types.ts';
import { type Context, contextOf, readTranscript } from './transcript.ts';

// spec: console-worker §2.6 — before a step whose context would not fit the model's window, the
// harness compacts through `context::compact` and stores the same `compaction` entry /compact
// stores: {summary, tail_start_entry_id, tokens_before, timestamp}. The transcript stays whole.

/** Room kept for the answer (and the tool schema and framing) when deciding that a context overflows. */
function reserve(model: Model): number {
  return Math.min(model.max_output_tokens, 16_384) + 512;
}

export function wouldOverflow(model: Model | undefined, context: Context, system: string): boolean {
  if (!model) return false;
  const tokens = estimateMessages(context.items.map((i) => i.message)) + estimateText(context.compaction?.summary) + estimateText(system);
  return tokens + reserve(model) > model.context_window;
}

export type CompactionOutcome = { compacted: true; context: Context; tokens_before: number } | { compacted: false; status: string };

export async function compactSession(
  client: EngClient,
  scope: { sessionId: string; turnId: string; model: Model; span: WorkerSpan },
  context: Context,
): Promise<CompactionOutcome> {
  const { sessionId, model } = scope;
  const span = client.startSpan('compaction', { parent: scope.span.traceparent });
  span.setAttribute('eng.session.id', sessionId).setAttribute('eng.turn.id', scope.turnId);
  try {
    const result = await client.withSpan(span, () =>
      client.call<{ status: string; summary?: string; tail_start_index?: number | null; tokens_before?: number }>(
        'context::compact',
        {
          messages: context.items.map((i) => i.message),
          model: {
            id: model.id,
            provider: model.provider,
            limits: { context_window: model.context_window, max_output_tokens: model.max_output_tokens },
          },
          options: {
            tail_turns: 2,
            previous_summary: context.compaction?.summary,
            // the kept tail must leave the window room to work in
            preserve_recent_tokens: Math.max(1024, Math.floor(model.context_window / 4)),
            lease_key: sessionId,
          },
        },
        { timeoutMs: 330_000 },
      ),
    );
    span.setAttribute('eng.compaction.status', result.status);
    if (result.status !== 'ok' || !result.summary) {
      span.end();
      return { compacted: false, status: result.status };
    }
    const tailIndex = result.tail_start_index;
    const tailEntry = tailIndex === null || tailIndex === undefined ? null : (context.items[tailIndex]?.entry_id ?? null);
    await client.call(
      'session::append',
      {
        session_id: sessionId,
        origin: { turn_id: scope.turnId, automatic: true },
        custom: {
          custom_type: 'compaction',
          data: {
            summary: result.summary,
            tail_start_entry_id: tailEntry,
            tokens_before: result.tokens_before ?? 0,
            timestamp: Date.now(),
          },
        },
      },
      { timeoutMs: 15_000 },
    );
    span.end();
    return { compacted: true, context: contextOf(await readTranscript(client, sessionId)), tokens_before: result.tokens_before ?? 0 };
  } catch (err) {
    span.end({ error: err });
    return { compacted: false, status: `failed: ${(err as Error).message}` };
  }
}
