import { type Block, contextOf, type Entry } from './transcript.ts';

/**
 * The context-usage meter (console-worker.md §2.9): a token estimate of what the model will see
 * next — characters / 4 over user, assistant and thought text, function inputs and outputs as
 * JSON and the compaction summary — against the model's context window. Warn at ≥ 75 % (consider
 * /compact), danger at ≥ 90 % (the harness compacts before the next step); an unknown window
 * shows the count only.
 */

export const WARN_RATIO = 0.75;
export const DANGER_RATIO = 0.9;

function json(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Characters the estimate counts in a content array. */
export function blockChars(content: readonly Block[] | undefined): number {
  let n = 0;
  for (const block of content ?? []) {
    if (block.type === 'text' || block.type === 'thinking') n += block.text.length;
    else if (block.type === 'function_call') n += block.function_id.length + json(block.arguments).length;
    else if (block.type === 'function_result') n += blockChars(block.content);
  }
  return n;
}

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

const counted = new WeakMap<readonly Block[], number>();

/** Characters of a message's content, counted once per content array (entries are immutable; an update brings a new one). */
function contentChars(content: readonly Block[] | undefined): number {
  if (!content) return 0;
  let n = counted.get(content);
  if (n === undefined) {
    n = blockChars(content);
    counted.set(content, n);
  }
  return n;
}

/** Estimated tokens of the conversation the model sees next. */
export function estimateContextTokens(entries: readonly Entry[]): number {
  const { summary, messages } = contextOf(entries);
  let chars = summary?.length ?? 0;
  for (const entry of messages) chars += contentChars(entry.message?.content);
  return estimateTokens(chars);
}

export type MeterLevel = 'ok' | 'warn' | 'danger' | 'unknown';

export interface Usage {
  tokens: number;
  window?: number;
  ratio?: number;
  level: MeterLevel;
}

export function contextUsage(tokens: number, window: number | undefined): Usage {
  if (!window || !Number.isFinite(window) || window <= 0) return { tokens, level: 'unknown' };
  const ratio = tokens / window;
  const level: MeterLevel = ratio >= DANGER_RATIO ? 'danger' : ratio >= WARN_RATIO ? 'warn' : 'ok';
  return { tokens, window, ratio, level };
}
