/**
 * A conversation's transcript as the browser keeps it (console-worker.md §2.2, §2.3): entries of
 * the session store keyed by entry id, reconciled by `revision` (a snapshot from
 * `session::messages` and the `session::message-added/updated` events may arrive in any order;
 * the highest revision of an entry wins), in transcript order.
 */

export type Block =
  | { type: 'text'; text: string }
  | { type: 'image'; mime: string; data: string; attachment_id?: string | null }
  | { type: 'file'; attachment_id: string; name: string; mime: string; size: number }
  | { type: 'thinking'; text: string; signature?: string | null }
  | { type: 'function_call'; id: string; function_id: string; arguments?: unknown }
  | { type: 'function_result'; function_call_id: string; content: Block[]; is_error?: boolean | null };

export type StopReason = 'end' | 'length' | 'function_call' | 'aborted' | 'error';

export interface ChatMessage {
  role: 'user' | 'assistant' | 'function_result' | 'custom';
  content: Block[];
  timestamp?: number;
  stop_reason?: StopReason;
  error_message?: string | null;
  error_kind?: string | null;
  model?: string;
  provider?: string;
  usage?: { input?: number | null; output?: number | null } | null;
  function_call_id?: string;
  function_id?: string;
  is_error?: boolean;
  details?: unknown;
  custom_type?: string;
}

export interface Entry {
  entry_id: string;
  parent_id?: string | null;
  timestamp?: number;
  revision: number;
  origin?: Record<string, unknown>;
  message?: ChatMessage;
  custom?: { custom_type: string; data: unknown };
}

export interface Transcript {
  /** Entry ids in transcript order. */
  readonly order: readonly string[];
  readonly byId: ReadonlyMap<string, Entry>;
}

export const EMPTY_TRANSCRIPT: Transcript = { order: [], byId: new Map() };

/**
 * One entry from an event (`message-added` carries the envelope, `message-updated` the entry id,
 * the message and its revision). An older or equal revision changes nothing (same object back).
 *
 * A new entry whose parent is shown but is not the last stored entry starts another branch (a
 * Regenerate or an Edit moved the session's active path back, harness::regenerate / edit): the
 * stored entries after its parent have left the path and leave the transcript. Messages only
 * shown so far (optimistic, revision -1) stay.
 */
export function applyEntry(state: Transcript, entry: Entry): Transcript {
  const known = state.byId.get(entry.entry_id);
  if (known && known.revision >= entry.revision) return state;
  const byId = new Map(state.byId);
  // an update does not repeat the envelope: keep what the added event or the snapshot said
  byId.set(entry.entry_id, known ? { ...known, ...stripUndefined(entry) } : entry);
  if (known) return { order: state.order, byId };
  // a message shown before it is stored does not know its parent yet: it never starts a branch
  const order = entry.revision < 0 ? state.order : branchFrom(state, byId, entry.parent_id);
  return { order: [...order, entry.entry_id], byId };
}

/** The order with the stored entries after `parentId` dropped (from `byId` too) when they are off the new entry's path. */
function branchFrom(state: Transcript, byId: Map<string, Entry>, parentId: string | null | undefined): readonly string[] {
  if (parentId === undefined || state.order.length === 0) return state.order;
  const at = parentId === null ? -1 : state.order.indexOf(parentId);
  if (parentId !== null && at < 0) return state.order;
  const after = state.order.slice(at + 1);
  const superseded = after.filter((id) => (state.byId.get(id)?.revision ?? -1) >= 0);
  if (superseded.length === 0) return state.order;
  for (const id of superseded) byId.delete(id);
  const gone = new Set(superseded);
  return state.order.filter((id) => !gone.has(id));
}

/**
 * A snapshot read from the store (oldest first). Its order is authoritative; an entry the events
 * delivered at a higher revision than the snapshot keeps the event's version, and entries the
 * events added after the snapshot was read stay after it: those that continue its path (their
 * parent is its last entry, or one of them), optimistic ones and those whose parent is unknown.
 * An entry the snapshot does not have whose parent is earlier on the path was left behind by a
 * rewind (Regenerate, Edit) and is dropped.
 */
export function mergeSnapshot(state: Transcript, snapshot: readonly Entry[]): Transcript {
  const byId = new Map<string, Entry>();
  const order: string[] = [];
  for (const entry of snapshot) {
    const known = state.byId.get(entry.entry_id);
    byId.set(entry.entry_id, known && known.revision > entry.revision ? { ...entry, ...stripUndefined(known) } : entry);
    order.push(entry.entry_id);
  }
  const dropped = new Set<string>();
  for (const id of state.order) {
    if (byId.has(id)) continue;
    const known = state.byId.get(id);
    if (!known) continue;
    const parent = known.parent_id;
    const continues =
      known.revision < 0 ||
      parent === undefined ||
      parent === (order.at(-1) ?? null) ||
      (parent !== null && !byId.has(parent) && !dropped.has(parent));
    if (!continues) {
      dropped.add(id);
      continue;
    }
    byId.set(id, known);
    order.push(id);
  }
  return { order, byId };
}

export function entriesOf(state: Transcript): Entry[] {
  const out: Entry[] = [];
  for (const id of state.order) {
    const entry = state.byId.get(id);
    if (entry) out.push(entry);
  }
  return out;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Text of a content array (text blocks only), joined. */
export function textOf(content: readonly Block[] | undefined): string {
  return (content ?? [])
    .filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

/** The first line of the first user message: what a conversation is titled from (seed 2.9). */
export function titleFrom(text: string, max = 60): string {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? '';
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

export interface CompactionData {
  summary: string;
  tail_start_entry_id: string | null;
  tokens_before: number;
}

export function compactionOf(entry: Entry): CompactionData | undefined {
  if (entry.custom?.custom_type !== 'compaction') return undefined;
  const data = (entry.custom.data ?? {}) as Record<string, unknown>;
  if (typeof data.summary !== 'string' || !data.summary) return undefined;
  return {
    summary: data.summary,
    tail_start_entry_id: typeof data.tail_start_entry_id === 'string' ? data.tail_start_entry_id : null,
    tokens_before: typeof data.tokens_before === 'number' ? data.tokens_before : 0,
  };
}

/**
 * What the model sees next (console-worker.md §2.6): after the latest compaction, its summary and
 * the messages from its `tail_start_entry_id` on; otherwise every message.
 */
export function contextOf(entries: readonly Entry[]): { summary?: string; messages: Entry[] } {
  let anchor = -1;
  let compaction: CompactionData | undefined;
  entries.forEach((entry, index) => {
    const c = compactionOf(entry);
    if (c) {
      anchor = index;
      compaction = c;
    }
  });
  let start = anchor + 1;
  if (compaction?.tail_start_entry_id) {
    const at = entries.findIndex((e) => e.entry_id === compaction?.tail_start_entry_id);
    if (at >= 0) start = at;
  }
  const messages = entries.slice(start).filter((e) => e.message && e.message.role !== 'custom');
  return compaction ? { summary: compaction.summary, messages } : { messages };
}
