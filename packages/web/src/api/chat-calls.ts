import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { onChatEvent } from './chat-live.ts';
import { callEngine } from './client.ts';
import type { TraceListResult } from './traces.ts';

/**
 * What a function card says about its call after the fact (issue 25 item 3): who decided on it
 * and when, how long it ran, and its span in the trace explorer.
 *
 * - Decisions: the gate fires `approval::pending-resolved {function_call_id, outcome, resolved_at}`
 *   once per held call; this console also remembers the decisions it made itself (Approve once,
 *   Always = for this session, Deny). Both are kept in local storage, so a reload keeps them. The
 *   gate keeps no queryable history, so a call decided while no console was open has no record.
 * - The span: the harness runs every allowed call in a span `function <id>` carrying
 *   `eng.function_call.id`; its duration is the call's run time.
 */

export type DecisionOutcome = 'allow' | 'deny' | 'timeout' | 'aborted';

export interface CallDecision {
  outcome: DecisionOutcome;
  /** `you`: this console decided; `person`: someone else resolved it (another console, a bus client). */
  by: 'you' | 'person' | 'gate';
  /** For an allow by this console: once, or the rest of the session ("Always"). */
  scope?: 'once' | 'session';
  at: number;
  reason?: string;
}

const STORAGE_KEY = 'eng-chat-decisions';
const KEEP = 500;

let decisions: Map<string, CallDecision> = load();
const listeners = new Set<() => void>();

function load(): Map<string, CallDecision> {
  try {
    const raw = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]');
    return new Map(Array.isArray(raw) ? (raw as Array<[string, CallDecision]>) : []);
  } catch {
    return new Map();
  }
}

const keyOf = (sessionId: string, callId: string) => `${sessionId}/${callId}`;

function remember(key: string, decision: CallDecision): void {
  decisions = new Map(decisions);
  decisions.delete(key);
  decisions.set(key, decision);
  while (decisions.size > KEEP) decisions.delete(decisions.keys().next().value as string);
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify([...decisions]));
  } catch {
    // storage full or unavailable: the decision is still shown until the page closes
  }
  for (const l of listeners) l();
}

/** This console decided on a held call (called once `approval::resolve` took it). */
export function noteOwnDecision(
  sessionId: string,
  callId: string,
  decision: { decision: 'allow' | 'deny'; always?: boolean; reason?: string },
): void {
  const key = keyOf(sessionId, callId);
  const known = decisions.get(key);
  remember(key, {
    outcome: decision.decision,
    by: 'you',
    ...(decision.decision === 'allow' ? { scope: decision.always ? 'session' : 'once' } : {}),
    at: known?.at ?? Date.now(),
    ...(decision.reason ? { reason: decision.reason } : {}),
  });
}

let listening = false;
function listen(): void {
  if (listening) return;
  listening = true;
  onChatEvent((e) => {
    if (e.type !== 'pending-resolved' || !e.session_id || !e.function_call_id) return;
    const key = keyOf(e.session_id, e.function_call_id);
    const known = decisions.get(key);
    const outcome = (['allow', 'deny', 'timeout', 'aborted'] as const).find((o) => o === e.outcome);
    if (!outcome) return;
    // the event may arrive before or after approval::resolve answers this console
    const own = known?.by === 'you' ? known : undefined;
    remember(key, {
      outcome,
      by: own ? 'you' : outcome === 'timeout' || outcome === 'aborted' ? 'gate' : 'person',
      ...(own?.scope ? { scope: own.scope } : {}),
      at: e.resolved_at ?? own?.at ?? Date.now(),
      ...((e.reason ?? own?.reason) ? { reason: e.reason ?? own?.reason } : {}),
    });
  });
}

function subscribe(listener: () => void): () => void {
  listen();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The decision on one call, when this console saw it. */
export function useCallDecision(sessionId: string, callId: string): CallDecision | undefined {
  return useSyncExternalStore(subscribe, () => decisions.get(keyOf(sessionId, callId)));
}

export interface SessionGate {
  mode: 'manual' | 'auto' | 'full';
  modeSetAt: number;
  /** Per-session grants ("Always"): function id → when granted. */
  grants: Map<string, number>;
}

/** The session's approval settings (`approval::get-settings`): its mode and since when, its grants. */
export function useSessionGate(sessionId: string, enabled: boolean) {
  return useQuery({
    queryKey: ['chat', 'approval-settings', sessionId],
    enabled,
    staleTime: 10_000,
    queryFn: async (): Promise<SessionGate | null> => {
      const res = await callEngine<{
        settings?: { mode?: string; mode_set_at?: number; approved_always?: Array<{ function_id: string; granted_at: number }> };
      } | null>('approval::get-settings', { session_id: sessionId }).catch(() => null);
      const s = res?.settings;
      if (!s || (s.mode !== 'manual' && s.mode !== 'auto' && s.mode !== 'full')) return null;
      return {
        mode: s.mode,
        modeSetAt: s.mode_set_at ?? 0,
        grants: new Map((s.approved_always ?? []).map((g) => [g.function_id, g.granted_at])),
      };
    },
  });
}

export interface CallSpan {
  traceId: string;
  spanId: string;
  durationMs?: number;
}

/** The attribute the harness puts on a call's span: the trace explorer filters on it. */
export const CALL_ID_ATTRIBUTE = 'eng.function_call.id';

/**
 * The span `function <id>` of one call, once it has ended (spans reach the engine in batches:
 * looked up again every 1.5 s, 20 times at most).
 */
export function useCallSpan(callId: string, enabled: boolean) {
  return useQuery({
    queryKey: ['chat', 'call-span', callId],
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
    refetchInterval: (q) => (q.state.data || q.state.dataUpdateCount >= 20 ? false : 1500),
    queryFn: async (): Promise<CallSpan | null> => {
      const res = await callEngine<TraceListResult>('engine::traces::list', {
        attributes: [[CALL_ID_ATTRIBUTE, callId]],
        search_all_spans: true,
        include_internal: true,
        sort_by: 'start_time',
        sort_order: 'desc',
        limit: 10,
      });
      const span = res.spans.find((s) => s.name.startsWith('function ') && !s.pending && s.end_time_unix_nano > 0);
      if (!span) return null;
      return {
        traceId: span.trace_id,
        spanId: span.span_id,
        durationMs: (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6,
      };
    },
  });
}
