import type { EventTypes } from '../shared/event-types.ts';
import type { StateKv } from '../shared/kv.ts';
import { ApprovalEvent } from './events.ts';

// spec: console-worker.md §2.7 — the pending inbox: one record per held call, kept in the state
// store (scope approval-gate:pending) while it waits, removed when it is resolved. Each record
// fires approval::pending-created once and approval::pending-resolved exactly once.

export const PENDING_SCOPE = 'approval-gate:pending';
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Outcomes remembered after a record left the inbox, so a late repeat of the same call is answered, not held again. */
const REMEMBERED = 2000;

export type Outcome = 'allow' | 'deny' | 'timeout' | 'aborted';

export interface PendingRecord {
  function_call_id: string;
  function_id: string;
  session_id: string;
  turn_id: string;
  /** The call's arguments with secret-looking fields masked and long values clipped. */
  arguments_excerpt: unknown;
  assistant_excerpt?: string;
  depth: number;
  pending_at: number;
  expires_at: number;
  session_title?: string;
  session_description?: string;
  session_metadata?: Record<string, unknown>;
  kind?: string;
  /**
   * The call this record decides on: a digest of its turn, function id and arguments. A decision
   * is never applied to another call that reuses the id (issue 24 item 2).
   */
  call_digest?: string;
  /** What the call would run when it wraps others (`engine::functions::invoke(orders::ship)`): the grant key. */
  grant_key?: string;
  /** Every function the call would run, the named one first (shown to the person deciding). */
  runs?: string[];
}

/** How the held call learns its outcome: its `approval::request` waits, or (hook) the harness is called back. */
export type Delivery = 'wait' | 'hook';
type Stored = PendingRecord & { delivery: Delivery };

export interface Resolution {
  outcome: Outcome;
  reason?: string;
  resolved_at: number;
  /** The digest of the call it settled (a call reusing the id is another call). */
  call_digest?: string;
}

export const pendingKey = (sessionId: string, functionCallId: string) => `${sessionId}/${functionCallId}`;

export class PendingInbox {
  private readonly records = new Map<string, Stored>();
  private readonly waiters = new Map<string, Array<(resolution: Resolution) => void>>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly settled = new Map<string, Resolution>();

  constructor(
    private readonly kv: StateKv,
    private readonly events: EventTypes,
    /** Called once per resolved record (after the event), e.g. to call the harness back. */
    private readonly afterResolve: (
      record: PendingRecord,
      delivery: Delivery,
      resolution: Resolution,
    ) => Promise<{ turn_resumed?: boolean | null }>,
    private readonly log: (line: string) => void,
  ) {}

  /** Read the records a previous run left; re-arm their timers (an expired one times out now). */
  async load(): Promise<number> {
    for (const { key, value } of await this.kv.list<Stored>(PENDING_SCOPE)) {
      this.records.set(key, value);
      this.arm(key, value.expires_at);
    }
    return this.records.size;
  }

  get(sessionId: string, functionCallId: string): PendingRecord | undefined {
    const stored = this.records.get(pendingKey(sessionId, functionCallId));
    return stored ? publicRecord(stored) : undefined;
  }

  /**
   * How a call that already left the inbox was settled (remembered for the last few thousand), when
   * it is the same call: one that reuses the id for other arguments, another function or another
   * turn makes the remembered outcome forgotten and gets its own decision.
   */
  settledOf(sessionId: string, functionCallId: string, callDigest: string): Resolution | undefined {
    const key = pendingKey(sessionId, functionCallId);
    const settled = this.settled.get(key);
    if (!settled) return undefined;
    if (settled.call_digest === callDigest) return settled;
    this.settled.delete(key);
    return undefined;
  }

  /**
   * Hold a call: store its record and fire pending-created. A call already held is returned as is
   * (no second event); one already settled answers with its resolution instead of a new record.
   */
  async hold(record: PendingRecord, delivery: Delivery): Promise<{ record: PendingRecord; created: boolean } | { settled: Resolution }> {
    const key = pendingKey(record.session_id, record.function_call_id);
    const settled = record.call_digest ? this.settledOf(record.session_id, record.function_call_id, record.call_digest) : undefined;
    if (settled) return { settled };
    const existing = this.records.get(key);
    if (existing) return { record: publicRecord(existing), created: false };
    const stored: Stored = { ...record, delivery };
    this.records.set(key, stored);
    try {
      await this.kv.set(PENDING_SCOPE, key, stored);
    } catch (err) {
      this.records.delete(key);
      throw err;
    }
    this.arm(key, record.expires_at);
    this.events.emit(ApprovalEvent.PendingCreated, record, { ...record, status: 'pending' });
    return { record, created: true };
  }

  /** Resolves with the record's resolution once it is settled (at once when it already is). */
  wait(sessionId: string, functionCallId: string): Promise<Resolution | undefined> {
    const key = pendingKey(sessionId, functionCallId);
    if (!this.records.has(key)) return Promise.resolve(this.settled.get(key));
    return new Promise((resolve) => {
      const list = this.waiters.get(key) ?? [];
      list.push(resolve);
      this.waiters.set(key, list);
    });
  }

  /**
   * Settle a record once: the first resolution wins, later ones answer `{resolved: false}`. The
   * record leaves memory before anything is awaited, so two racing decisions cannot both apply.
   */
  async resolve(
    sessionId: string,
    functionCallId: string,
    outcome: Outcome,
    reason?: string,
  ): Promise<{ resolved: boolean; turn_resumed?: boolean | null }> {
    const key = pendingKey(sessionId, functionCallId);
    const stored = this.records.get(key);
    if (!stored) return { resolved: false };
    this.records.delete(key);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    const resolution: Resolution = {
      outcome,
      ...(reason ? { reason } : {}),
      resolved_at: Date.now(),
      ...(stored.call_digest ? { call_digest: stored.call_digest } : {}),
    };
    this.settled.set(key, resolution);
    if (this.settled.size > REMEMBERED) this.settled.delete(this.settled.keys().next().value as string);
    await this.kv.delete(PENDING_SCOPE, key).catch((err) => this.log(`removing pending record ${key} failed: ${(err as Error).message}`));
    const record = publicRecord(stored);
    this.events.emit(ApprovalEvent.PendingResolved, record, {
      function_call_id: record.function_call_id,
      function_id: record.function_id,
      session_id: record.session_id,
      turn_id: record.turn_id,
      outcome,
      ...(reason ? { reason } : {}),
      ...(record.session_metadata ? { session_metadata: record.session_metadata } : {}),
      resolved_at: resolution.resolved_at,
    });
    for (const wake of this.waiters.get(key) ?? []) wake(resolution);
    this.waiters.delete(key);
    const after = await this.afterResolve(record, stored.delivery, resolution).catch((err) => {
      this.log(`after resolving ${key}: ${(err as Error).message}`);
      return { turn_resumed: null };
    });
    return { resolved: true, ...after };
  }

  /** Every record matching `filter`, oldest first. */
  list(filter: (record: PendingRecord) => boolean): PendingRecord[] {
    return [...this.records.values()]
      .map(publicRecord)
      .filter(filter)
      .sort(
        (a, b) =>
          a.pending_at - b.pending_at ||
          pendingKey(a.session_id, a.function_call_id).localeCompare(pendingKey(b.session_id, b.function_call_id)),
      );
  }

  /** Records of a session (optionally of one turn), for aborting them. */
  keysOf(sessionId: string, turnId?: string): Array<{ session_id: string; function_call_id: string }> {
    return [...this.records.values()]
      .filter((r) => r.session_id === sessionId && (turnId === undefined || r.turn_id === turnId))
      .map((r) => ({ session_id: r.session_id, function_call_id: r.function_call_id }));
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private arm(key: string, expiresAt: number): void {
    const [sessionId, ...rest] = key.split('/');
    const callId = rest.join('/');
    const fire = () => {
      const left = expiresAt - Date.now();
      if (left > 0) {
        this.timers.set(key, setTimeout(fire, Math.min(left, MAX_TIMER_MS)));
        return;
      }
      void this.resolve(sessionId as string, callId, 'timeout', 'no decision was made before the approval timed out');
    };
    const timer = setTimeout(fire, Math.max(0, Math.min(expiresAt - Date.now(), MAX_TIMER_MS)));
    timer.unref?.();
    this.timers.set(key, timer);
  }
}

function publicRecord(stored: Stored): PendingRecord {
  const { delivery: _delivery, ...record } = stored;
  return record;
}

const SECRET_KEY = /pass(word)?|secret|token|api[_-]?key|authorization|cookie|credential|private[_-]?key/i;
const MAX_STRING = 500;
const MAX_EXCERPT = 4000;

/** Arguments safe to show in an inbox or forward to a notification: secrets masked, long values clipped. */
export function excerptOf(args: unknown): unknown {
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
    if (typeof value !== 'object' || value === null) return value;
    if (depth > 6) return '…';
    if (Array.isArray(value)) return value.slice(0, 50).map((v) => walk(v, depth + 1));
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && typeof v !== 'object' ? '[redacted]' : walk(v, depth + 1)]),
    );
  };
  const excerpt = walk(args ?? null, 0);
  const text = JSON.stringify(excerpt) ?? 'null';
  return text.length > MAX_EXCERPT ? `${text.slice(0, MAX_EXCERPT)}…` : excerpt;
}
