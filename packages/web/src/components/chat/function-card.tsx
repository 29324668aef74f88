import { Ban, Check, ChevronRight, CircleSlash, Hand, Layers, ShieldCheck, SquareFunction, X } from 'lucide-react';
import { memo, useState } from 'react';
import { resolveApproval } from '../../api/chat-turns.ts';
import { type CallState, type CallView, failedCount } from '../../lib/chat/view.ts';
import { Badge, type Tone } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { TextInput } from '../ui/inputs.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { CallRecord } from './call-record.tsx';
import { Json } from './rich-lazy.tsx';

/**
 * Function call cards (seed 2.9, 3; console-worker.md §2.8): running, pending (held for approval:
 * Approve, Deny with a reason, Always through `approval::resolve`), error (denied or failed) and
 * done; consecutive calls are grouped with a failed counter. A finished card says who decided,
 * how long it ran and links to its span (call-record.tsx).
 */

const STATE: Record<CallState, { label: string; tone: Tone }> = {
  streaming: { label: 'preparing', tone: 'neutral' },
  pending: { label: 'needs approval', tone: 'warn' },
  running: { label: 'running', tone: 'info' },
  done: { label: 'done', tone: 'ok' },
  error: { label: 'error', tone: 'bad' },
  cancelled: { label: 'not run', tone: 'neutral' },
};

function StateIcon({ state }: { state: CallState }) {
  if (state === 'running' || state === 'streaming') return <Spinner size={13} />;
  if (state === 'pending') return <Hand size={14} className="text-warn" />;
  if (state === 'error') return <X size={14} className="text-bad" />;
  if (state === 'done') return <Check size={14} className="text-ok" />;
  return <CircleSlash size={13} className="text-faint" />;
}

function Approval({ call, sessionId }: { call: CallView; sessionId: string }) {
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const decide = async (decision: 'allow' | 'deny', always = false) => {
    setBusy(always ? 'always' : decision);
    setError(undefined);
    try {
      const res = await resolveApproval({
        sessionId,
        callId: call.id,
        functionId: call.functionId,
        decision,
        reason: decision === 'deny' ? reason.trim() || undefined : undefined,
        always,
      });
      if (!res.resolved) setError('This call is no longer waiting (decided elsewhere, timed out or its turn ended).');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <div className="space-y-2 border-t border-line bg-warn-soft/40 px-3 py-2.5" data-testid="approval-actions">
      <p className="text-[12.5px] text-muted">
        The model wants to call <code className="font-mono text-fg">{call.functionId}</code>. It waits for your decision.
      </p>
      {denying ? (
        <form
          className="flex flex-wrap items-center gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            void decide('deny');
          }}
        >
          <TextInput
            autoFocus
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            placeholder="Why not? (shown to the model)"
            aria-label="Reason for denying"
            className="min-w-48 flex-1"
          />
          <Button size="sm" variant="danger" type="submit" loading={busy === 'deny'} icon={Ban}>
            Deny
          </Button>
          <Button size="sm" variant="ghost" onClick={() => setDenying(false)}>
            Cancel
          </Button>
        </form>
      ) : (
        <div className="flex flex-wrap gap-2">
          <Button size="sm" variant="primary" icon={Check} loading={busy === 'allow'} onClick={() => void decide('allow')}>
            Approve
          </Button>
          <Button
            size="sm"
            icon={ShieldCheck}
            loading={busy === 'always'}
            onClick={() => void decide('allow', true)}
            title={`Approve, and approve ${call.functionId} without asking for the rest of this conversation`}
          >
            Always
          </Button>
          <Button size="sm" variant="ghost" icon={Ban} onClick={() => setDenying(true)}>
            Deny…
          </Button>
        </div>
      )}
      {error ? <p className="text-[12.5px] text-bad">{error}</p> : null}
    </div>
  );
}

export const FunctionCard = memo(function FunctionCard({
  call,
  sessionId,
  nested,
}: {
  call: CallView;
  sessionId: string;
  nested?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const expanded = open || call.state === 'pending';
  const meta = STATE[call.state];
  const errorLabel = call.state === 'error' ? (call.errorKind === 'denied' ? 'denied' : 'error') : meta.label;
  return (
    <div
      className={cn(
        'overflow-hidden bg-surface',
        nested ? 'border-t border-line first:border-t-0' : 'rounded-lg border border-line shadow-card',
        call.state === 'pending' && !nested && 'border-warn/60',
      )}
      data-testid="function-card"
      data-state={call.state}
      data-call-id={call.id}
      data-function-id={call.functionId}
    >
      <button
        type="button"
        onClick={() => setOpen((v) => !v)}
        aria-expanded={expanded}
        className="flex w-full cursor-pointer items-center gap-2 px-3 py-2 text-left hover:bg-surface-2"
      >
        <ChevronRight size={13} className={cn('shrink-0 text-faint transition-transform', expanded && 'rotate-90')} />
        <StateIcon state={call.state} />
        <SquareFunction size={13} className="shrink-0 text-faint" />
        <span className="truncate font-mono text-[12.5px] text-fg">{call.functionId}</span>
        {call.description ? <span className="hidden truncate text-xs text-muted sm:inline">— {call.description}</span> : null}
        <span className="flex-1" />
        <Badge tone={call.state === 'error' ? 'bad' : meta.tone}>
          <span data-testid="function-state">{errorLabel}</span>
        </Badge>
      </button>
      {call.state === 'error' && call.errorMessage ? (
        <p className="border-t border-line px-3 py-1.5 text-[12.5px] text-bad" data-testid="function-error">
          {call.errorKind === 'denied' ? 'Denied: ' : ''}
          {call.errorMessage}
        </p>
      ) : null}
      {call.state === 'done' || call.state === 'error' || call.state === 'cancelled' ? (
        <CallRecord call={call} sessionId={sessionId} />
      ) : null}
      {expanded ? (
        <div className="space-y-2 border-t border-line px-3 py-2.5">
          <Json value={call.arguments ?? {}} label="input" />
          {call.output !== undefined && call.state === 'done' ? <Json value={call.output} label="output" /> : null}
          {call.state === 'error' && call.output !== undefined ? <Json value={call.output} label="error" /> : null}
        </div>
      ) : null}
      {call.state === 'pending' ? <Approval call={call} sessionId={sessionId} /> : null}
    </div>
  );
});

export const CallGroup = memo(function CallGroup({ calls, sessionId }: { calls: CallView[]; sessionId: string }) {
  const [collapsed, setCollapsed] = useState(false);
  if (calls.length === 1) return <FunctionCard call={calls[0] as CallView} sessionId={sessionId} />;
  const failed = failedCount(calls);
  const active = calls.some((c) => c.state === 'pending' || c.state === 'running' || c.state === 'streaming');
  return (
    <div className="overflow-hidden rounded-lg border border-line bg-surface shadow-card" data-testid="function-group">
      <button
        type="button"
        onClick={() => setCollapsed((v) => !v)}
        aria-expanded={!collapsed}
        className="flex w-full cursor-pointer items-center gap-2 border-b border-line bg-surface-2 px-3 py-1.5 text-left text-xs text-muted hover:text-fg"
      >
        <ChevronRight size={13} className={cn('text-faint transition-transform', !collapsed && 'rotate-90')} />
        <Layers size={13} />
        <span data-testid="function-group-count">{calls.length} function calls</span>
        {failed > 0 ? (
          <Badge tone="bad">
            <span data-testid="function-group-failed">{failed} failed</span>
          </Badge>
        ) : null}
        {active ? <Spinner size={12} /> : null}
      </button>
      {collapsed ? null : calls.map((call) => <FunctionCard key={call.key} call={call} sessionId={sessionId} nested />)}
    </div>
  );
});
