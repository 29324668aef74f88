import { Link } from '@tanstack/react-router';
import { Activity, ShieldCheck, ShieldX, Timer } from 'lucide-react';
import {
  CALL_ID_ATTRIBUTE,
  type CallDecision,
  type SessionGate,
  useCallDecision,
  useCallSpan,
  useSessionGate,
} from '../../api/chat-calls.ts';
import type { CallView } from '../../lib/chat/view.ts';
import { formatDuration, formatTime } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';

/**
 * The record line of a finished call card (issue 25 item 3): who allowed or denied it and when,
 * how long it ran (its span), and a link to that span in the trace explorer. Only what is known is
 * said: a decision this console did not see is not guessed.
 */

const hhmm = (ms: number) => formatTime(ms).slice(0, 5);

export interface DecisionLine {
  tone: 'ok' | 'bad' | 'muted';
  text: string;
  title?: string;
}

/** What the card says about the decision on a call; undefined when nothing is known. */
export function describeDecision(
  call: CallView,
  decision: CallDecision | undefined,
  gate: SessionGate | null | undefined,
): DecisionLine | undefined {
  if (decision) {
    const at = hhmm(decision.at);
    switch (decision.outcome) {
      case 'allow':
        if (decision.by === 'you')
          return { tone: 'ok', text: `Allowed by you · ${decision.scope === 'session' ? 'for this session' : 'once'} · ${at}` };
        return {
          tone: 'ok',
          text: `Allowed by a person · ${at}`,
          title: 'Resolved outside this console (another console or a bus client)',
        };
      case 'deny':
        return { tone: 'bad', text: `Denied by ${decision.by === 'you' ? 'you' : 'a person'} · ${at}` };
      case 'timeout':
        return { tone: 'bad', text: `Denied · nobody decided in time · ${at}` };
      case 'aborted':
        return { tone: 'muted', text: `Not run · its turn ended first · ${at}` };
    }
  }
  const ran = call.state === 'done' || (call.state === 'error' && call.errorKind !== 'denied');
  if (!ran) return undefined;
  const at = call.finishedAt;
  // a grant or a mode counts only when it was already in place when the call finished
  const granted = gate?.grants.get(call.functionId);
  if (granted !== undefined && (at === undefined || granted <= at))
    return { tone: 'ok', text: `Allowed by your grant for this session · since ${hhmm(granted)}` };
  if (gate && gate.mode !== 'manual' && (at === undefined || gate.modeSetAt <= at))
    return {
      tone: 'ok',
      text: `Allowed by mode ${gate.mode}`,
      title: gate.mode === 'auto' ? 'Auto mode: the trust list or a rule of the approval gate allowed it' : undefined,
    };
  return {
    tone: 'ok',
    text: 'Allowed without a prompt',
    title: 'No held call was seen here: a rule of the approval-gate entry (or a grant for this exact call chain) allowed it',
  };
}

export function CallRecord({ call, sessionId }: { call: CallView; sessionId: string }) {
  const decision = useCallDecision(sessionId, call.id);
  const ran = call.state === 'done' || (call.state === 'error' && call.errorKind !== 'denied');
  const gate = useSessionGate(sessionId, ran && !decision).data;
  const span = useCallSpan(call.id, ran).data;
  const line = describeDecision(call, decision, gate);
  if (!line && !ran) return null;
  const Icon = line?.tone === 'bad' ? ShieldX : ShieldCheck;
  return (
    <div
      className="flex flex-wrap items-center gap-x-3 gap-y-1 border-t border-line px-3 py-1.5 text-[11.5px] text-muted"
      data-testid="call-record"
    >
      {line ? (
        <span
          className={cn('inline-flex min-w-0 items-center gap-1', line.tone === 'ok' && 'text-ok', line.tone === 'bad' && 'text-bad')}
          title={line.title}
          data-testid="call-decision"
        >
          <Icon size={12} className="shrink-0" />
          <span>{line.text}</span>
        </span>
      ) : null}
      {span?.durationMs !== undefined ? (
        <span
          className="inline-flex items-center gap-1 tabular-nums"
          title="How long the function ran (its span)"
          data-testid="call-duration"
        >
          <Timer size={12} className="shrink-0" />
          {formatDuration(span.durationMs)}
        </span>
      ) : null}
      {ran ? (
        <Link
          to="/traces"
          search={{
            attr: [[CALL_ID_ATTRIBUTE, call.id]],
            ...(span ? { trace_id: span.traceId, span: span.spanId } : {}),
          }}
          className="ml-auto inline-flex items-center gap-1 text-accent hover:underline"
          title={`Open the span of this call in the trace explorer (${CALL_ID_ATTRIBUTE}=${call.id})`}
          data-testid="call-span-link"
        >
          <Activity size={12} /> Span
        </Link>
      ) : null}
    </div>
  );
}
