import type { EngClient } from '@eng/sdk';
import { answerCap, DEFAULT_SETTINGS, ENTRY_ID } from '../router/settings.ts';

// The cap on one answer (`max_answer_bytes` of the llm-router entry) as the harness applies it to
// the stream it reads: a provider worker that ignores the cap is cut off here (issue 24 item 4).

const TTL_MS = 5000;
let cached: { at: number; limit: Promise<number> } | undefined;

/** The configured cap, re-read every few seconds; the default when the entry cannot be read. */
export function answerLimit(client: EngClient): Promise<number> {
  if (cached && Date.now() - cached.at < TTL_MS) return cached.limit;
  const limit = client
    .call<{ value?: { settings?: { max_answer_bytes?: unknown } } } | null>('configuration::get', { id: ENTRY_ID }, { timeoutMs: 5000 })
    .then((entry) => answerCap(entry?.value?.settings?.max_answer_bytes))
    .catch(() => DEFAULT_SETTINGS.max_answer_bytes);
  cached = { at: Date.now(), limit };
  return limit;
}
