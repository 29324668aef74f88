import { type BlockSpan, blockSpans, extendSpans } from './markdown-blocks.ts';
import { type Block, compactionOf, type Entry, textOf } from './transcript.ts';

/**
 * From entries to what the transcript shows (console-worker.md §2.3, §2.8): an assistant entry is
 * split into segments `<entry_id>:<block index>` — thinking → thought, text → assistant text,
 * function_call → a function card whose result comes from the function_result entry of the same
 * call id; consecutive cards are grouped; stop reasons length / error / aborted add a notice; a
 * `compaction` custom entry is a marker. Assistant text is cut further into its Markdown blocks,
 * one row each: a long or streaming answer keeps only the blocks on screen in the DOM, and a
 * streaming answer changes (and re-measures) only its last row.
 *
 * The answer to each user message (its assistant entries, calls and results) ends with an actions
 * row: Copy (the answer's text), and on the last answer, once no turn runs, Regenerate. A failed
 * last answer offers Retry in its notice instead. The last user message can be edited and sent
 * again (issue 25 item 4: harness::regenerate, harness::edit).
 */

export type CallState = 'streaming' | 'pending' | 'running' | 'done' | 'error' | 'cancelled';

export interface CallView {
  key: string;
  id: string;
  functionId: string;
  arguments: unknown;
  description?: string;
  state: CallState;
  /** The function's output (parsed as JSON when it is JSON). */
  output?: unknown;
  /** `denied` or `function_error` for soft errors. */
  errorKind?: string;
  errorMessage?: string;
  /** When its function_result was written (ms since the epoch). */
  finishedAt?: number;
}

export type ViewItem =
  | {
      kind: 'user';
      key: string;
      entryId: string;
      blocks: Block[];
      queued?: boolean;
      /** The last user message, stored, with no turn running: Edit replaces it (harness::edit). */
      editable?: boolean;
    }
  | {
      kind: 'text';
      key: string;
      entryId: string;
      text: string;
      streaming: boolean /** More blocks of the same text follow. */;
      more: boolean;
    }
  | { kind: 'thought'; key: string; entryId: string; text: string; streaming: boolean }
  | { kind: 'calls'; key: string; calls: CallView[] }
  | { kind: 'compaction'; key: string; entryId: string; summary: string; tokensBefore: number }
  | {
      kind: 'notice';
      key: string;
      entryId: string;
      reason: 'length' | 'error' | 'aborted';
      message?: string;
      /** error_kind of a failed generation (`auth_expired` for a 401/403). */
      errorKind?: string;
      /** The provider that answered (its settings fix an `auth_expired`). */
      provider?: string;
      /** The last answer failed and no turn runs: Retry answers the question again (harness::regenerate). */
      retry?: boolean;
    }
  | {
      kind: 'actions';
      key: string;
      /** The answer's last entry. */
      entryId: string;
      /** What Copy puts on the clipboard: the answer's text (Markdown), '' when it has none. */
      text: string;
      /** The last answer, finished, no turn running: Regenerate replaces it. */
      regenerate: boolean;
    };

export interface ViewContext {
  /** function_call ids held for a person (approval::pending-*). */
  pending: ReadonlySet<string>;
  /** A turn is running in this session (status working). */
  turnActive: boolean;
}

function parseOutput(text: string): unknown {
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

interface ResultInfo {
  isError: boolean;
  at?: number;
  output: unknown;
  errorKind?: string;
  errorMessage?: string;
}

const results = new WeakMap<object, ResultInfo>();

/** The result a function_result message carries; cached per message object, so unchanged entries keep identical outputs. */
function resultOf(message: NonNullable<Entry['message']>): ResultInfo {
  const cached = results.get(message);
  if (cached) return cached;
  const info = readResult(message);
  results.set(message, info);
  return info;
}

function readResult(message: NonNullable<Entry['message']>): ResultInfo {
  const text = textOf(message.content);
  const at = typeof message.timestamp === 'number' ? { at: message.timestamp } : {};
  // the harness's own refusals carry `error: {kind, message}`; a held call a person denied (or that
  // timed out) carries the gate's `{kind: 'denied', outcome, reason}`
  const details = (message.details ?? {}) as { error?: { kind?: string; message?: string }; kind?: string; reason?: string };
  const isError = message.is_error === true;
  if (isError && !details.error && details.kind === 'denied')
    return { isError, ...at, output: text, errorKind: 'denied', errorMessage: details.reason ?? text.split('\n')[0] };
  return {
    isError,
    ...at,
    output: isError ? text : parseOutput(text),
    errorKind: isError ? (details.error?.kind ?? 'function_error') : undefined,
    errorMessage: isError ? (details.error?.message ?? text.split('\n')[0]) : undefined,
  };
}

function callView(
  key: string,
  block: Extract<Block, { type: 'function_call' }>,
  result: ResultInfo | undefined,
  ctx: ViewContext,
): CallView {
  const args = (block.arguments ?? {}) as Record<string, unknown>;
  const streaming = typeof args === 'object' && args !== null && typeof args._streaming === 'string';
  let state: CallState;
  if (streaming) state = 'streaming';
  else if (result) state = result.isError ? 'error' : 'done';
  else if (ctx.pending.has(block.id)) state = 'pending';
  else if (ctx.turnActive) state = 'running';
  else state = 'cancelled';
  const description = !streaming && typeof args.description === 'string' ? args.description : undefined;
  return {
    key,
    id: block.id,
    functionId: streaming ? unresolvedTarget(args._streaming as string) : block.function_id,
    arguments: streaming ? undefined : block.arguments,
    ...(description ? { description } : {}),
    state,
    ...(result ? { output: result.output, errorKind: result.errorKind, errorMessage: result.errorMessage, finishedAt: result.at } : {}),
  };
}

/** While the arguments stream, the function id is whatever has arrived of `"function": "…"`. */
function unresolvedTarget(raw: string): string {
  const match = /"function"\s*:\s*"([^"]*)/.exec(raw);
  return match?.[1] ? match[1] : 'unresolved target';
}

const blockCache = new Map<string, string[]>();
/** The last cut of each streaming text (by segment key): the next update cuts only from its last block on. */
const growing = new Map<string, { text: string; spans: BlockSpan[] }>();

/**
 * Markdown blocks of a text, cached (the same texts are cut again on every update of a
 * conversation); a text that grows (streaming) is cut again from its last block only.
 */
function blocksOf(text: string, key: string, streaming: boolean): string[] {
  const known = blockCache.get(text);
  if (known) return known;
  let out: string[];
  if (streaming) {
    const spans = extendSpans(growing.get(key), text);
    if (growing.size > 50) growing.clear();
    growing.set(key, { text, spans });
    out = spans.map((s) => s.text);
  } else {
    // the end of a stream: its last cut is reused
    const last = growing.get(key);
    growing.delete(key);
    out = (last ? extendSpans(last, text) : blockSpans(text)).map((s) => s.text);
  }
  if (out.length === 0) out = [text];
  // every step of a streaming text is seen once: only finished texts are worth keeping
  if (!streaming) {
    if (blockCache.size > 5000) blockCache.clear();
    blockCache.set(text, out);
  }
  return out;
}

export function buildView(entries: readonly Entry[], ctx: ViewContext): ViewItem[] {
  const resultsById = new Map<string, ResultInfo>();
  for (const entry of entries) {
    const m = entry.message;
    if (m?.role === 'function_result' && m.function_call_id) resultsById.set(m.function_call_id, resultOf(m));
  }
  let lastAssistant = -1;
  let lastUser = -1;
  entries.forEach((entry, index) => {
    if (entry.message?.role === 'assistant') lastAssistant = index;
    else if (entry.message?.role === 'user') lastUser = index;
  });
  const lastAssistantId = entries[lastAssistant]?.entry_id;
  const items: ViewItem[] = [];
  const pushCall = (call: CallView) => {
    const last = items[items.length - 1];
    if (last?.kind === 'calls') last.calls.push(call);
    else items.push({ kind: 'calls', key: `calls:${call.key}`, calls: [call] });
  };
  // the answer being built: its assistant entries' text and how it ended
  let answer: { texts: string[]; lastEntry: string; failed: boolean } | undefined;
  const endAnswer = (last: boolean) => {
    if (!answer) return;
    const running = last && ctx.turnActive;
    const regenerate = last && !running && !answer.failed;
    const text = answer.texts.filter(Boolean).join('\n\n');
    if (!running && (text || regenerate))
      items.push({ kind: 'actions', key: `actions:${answer.lastEntry}`, entryId: answer.lastEntry, text, regenerate });
    answer = undefined;
  };
  entries.forEach((entry, index) => {
    const compaction = compactionOf(entry);
    if (compaction) {
      items.push({
        kind: 'compaction',
        key: entry.entry_id,
        entryId: entry.entry_id,
        summary: compaction.summary,
        tokensBefore: compaction.tokens_before,
      });
      return;
    }
    const m = entry.message;
    if (!m) return;
    if (m.role === 'user') {
      endAnswer(false);
      const queued = entry.origin?.queued === true;
      const editable = index === lastUser && !ctx.turnActive && entry.revision >= 0 && !queued;
      items.push({
        kind: 'user',
        key: entry.entry_id,
        entryId: entry.entry_id,
        blocks: m.content,
        ...(queued ? { queued } : {}),
        ...(editable ? { editable } : {}),
      });
      return;
    }
    if (m.role !== 'assistant') return;
    const streaming = ctx.turnActive && entry.entry_id === lastAssistantId && !m.stop_reason;
    answer ??= { texts: [], lastEntry: entry.entry_id, failed: false };
    answer.lastEntry = entry.entry_id;
    answer.failed = m.stop_reason === 'error';
    answer.texts.push(textOf(m.content));
    m.content.forEach((block, blockIndex) => {
      const key = `${entry.entry_id}:${blockIndex}`;
      if (block.type === 'text' && block.text) {
        const parts = blocksOf(block.text, key, streaming);
        parts.forEach((text, j) => {
          const last = j === parts.length - 1;
          items.push({ kind: 'text', key: `${key}:${j}`, entryId: entry.entry_id, text, streaming: streaming && last, more: !last });
        });
      } else if (block.type === 'thinking' && block.text)
        items.push({ kind: 'thought', key, entryId: entry.entry_id, text: block.text, streaming });
      else if (block.type === 'function_call') pushCall(callView(key, block, resultsById.get(block.id), ctx));
    });
    if (m.stop_reason === 'length' || m.stop_reason === 'error' || m.stop_reason === 'aborted') {
      const retry = m.stop_reason === 'error' && index === lastAssistant && lastAssistant > lastUser && !ctx.turnActive;
      items.push({
        kind: 'notice',
        key: `${entry.entry_id}:stop`,
        entryId: entry.entry_id,
        reason: m.stop_reason,
        ...(m.error_message ? { message: m.error_message } : {}),
        ...(m.stop_reason === 'error' && m.error_kind ? { errorKind: m.error_kind } : {}),
        ...(m.stop_reason === 'error' && m.provider ? { provider: m.provider } : {}),
        ...(retry ? { retry } : {}),
      });
    }
  });
  endAnswer(true);
  return items;
}

/** How many calls of a group failed (error state). */
export function failedCount(calls: readonly CallView[]): number {
  return calls.filter((c) => c.state === 'error').length;
}

function sameCall(a: CallView, b: CallView): boolean {
  return (
    a.key === b.key &&
    a.state === b.state &&
    a.functionId === b.functionId &&
    a.arguments === b.arguments &&
    a.output === b.output &&
    a.description === b.description &&
    a.errorMessage === b.errorMessage
  );
}

/** Whether two items render the same (so the previous object can be kept and its row skipped). */
export function sameItem(a: ViewItem, b: ViewItem): boolean {
  if (a.kind !== b.kind || a.key !== b.key) return false;
  switch (a.kind) {
    case 'user':
      return b.kind === 'user' && a.blocks === b.blocks && a.queued === b.queued && a.editable === b.editable;
    case 'text':
      return b.kind === 'text' && a.text === b.text && a.streaming === b.streaming && a.more === b.more;
    case 'thought':
      return b.kind === 'thought' && a.text === b.text && a.streaming === b.streaming;
    case 'calls':
      return b.kind === 'calls' && a.calls.length === b.calls.length && a.calls.every((c, i) => sameCall(c, b.calls[i] as CallView));
    case 'compaction':
      return b.kind === 'compaction' && a.summary === b.summary && a.tokensBefore === b.tokensBefore;
    case 'notice':
      return (
        b.kind === 'notice' &&
        a.reason === b.reason &&
        a.message === b.message &&
        a.errorKind === b.errorKind &&
        a.provider === b.provider &&
        a.retry === b.retry
      );
    case 'actions':
      return b.kind === 'actions' && a.entryId === b.entryId && a.text === b.text && a.regenerate === b.regenerate;
  }
}

/** `next` with every item that renders the same as in `previous` replaced by the previous object. */
export function keepStable(previous: readonly ViewItem[], next: ViewItem[]): ViewItem[] {
  if (previous.length === 0) return next;
  const byKey = new Map(previous.map((item) => [item.key, item]));
  let changed = previous.length !== next.length;
  const out = next.map((item, i) => {
    const before = byKey.get(item.key);
    if (before && sameItem(before, item)) {
      if (previous[i] !== before) changed = true;
      return before;
    }
    changed = true;
    return item;
  });
  return changed ? out : (previous as ViewItem[]);
}
