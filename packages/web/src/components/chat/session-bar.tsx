import { Link } from '@tanstack/react-router';
import { Activity, Gauge } from 'lucide-react';
import { memo } from 'react';
import type { SessionStatus } from '../../api/chat-sessions.ts';
import type { Usage } from '../../lib/chat/tokens.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';

/**
 * The conversation's header: title, status, the session id (copyable) with a link into the trace
 * explorer filtered and grouped by `eng.session.id`, and the context-usage meter.
 */

export function ContextMeter({ usage, onCompact }: { usage: Usage; onCompact: () => void }) {
  const pct = usage.ratio !== undefined ? Math.min(100, Math.round(usage.ratio * 100)) : undefined;
  const tone = usage.level === 'danger' ? 'bg-bad' : usage.level === 'warn' ? 'bg-warn' : 'bg-accent';
  const text =
    usage.window !== undefined
      ? `${usage.tokens.toLocaleString()} / ${usage.window.toLocaleString()} tokens (${pct}%)`
      : `${usage.tokens.toLocaleString()} tokens`;
  return (
    <div className="flex items-center gap-2" data-testid="context-meter" data-level={usage.level} data-tokens={usage.tokens}>
      <Gauge size={13} className="text-faint" />
      {pct !== undefined ? (
        <div className="h-1.5 w-24 overflow-hidden rounded-full bg-surface-3" aria-hidden="true">
          <div className={cn('h-full rounded-full', tone)} style={{ width: `${Math.max(2, pct)}%` }} />
        </div>
      ) : null}
      <span className="text-[11.5px] text-muted tabular-nums" title="Estimated: characters / 4 of what the model sees next">
        ~{text}
      </span>
      {usage.level === 'warn' ? (
        <button type="button" onClick={onCompact} className="cursor-pointer text-[11.5px] text-warn underline" data-testid="compact-nudge">
          consider /compact
        </button>
      ) : null}
      {usage.level === 'danger' ? (
        <button type="button" onClick={onCompact} className="cursor-pointer text-[11.5px] text-bad underline" data-testid="compact-nudge">
          nearly full: /compact now (the next turn compacts first)
        </button>
      ) : null}
    </div>
  );
}

const STATUS_TONE = { working: 'accent', idle: 'neutral', done: 'ok', error: 'bad' } as const;

export const SessionBar = memo(function SessionBar({
  sessionId,
  title,
  status,
  statusReason,
  usage,
  onCompact,
}: {
  sessionId: string;
  title: string;
  status: SessionStatus | undefined;
  statusReason?: string;
  usage: Usage;
  onCompact: () => void;
}) {
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-b border-line bg-surface/40 px-4 py-2" data-testid="session-bar">
      <h2 className="max-w-md truncate text-[13.5px] font-semibold text-fg" data-testid="chat-title">
        {title || 'New chat'}
      </h2>
      {status ? (
        <Badge tone={STATUS_TONE[status] ?? 'neutral'} title={statusReason}>
          <span data-testid="chat-status">{status}</span>
        </Badge>
      ) : null}
      <span className="inline-flex items-center gap-0.5 rounded-md border border-line bg-surface px-1.5 text-[11px] text-muted">
        <span className="max-w-52 truncate font-mono" data-testid="session-id" title={`Session id ${sessionId}`}>
          {sessionId}
        </span>
        <CopyButton text={sessionId} label="Copy session id" className="size-5" />
      </span>
      <Link
        to="/traces"
        search={{ attr: [['eng.session.id', sessionId]] }}
        className="inline-flex items-center gap-1 text-[11.5px] text-accent hover:underline"
        data-testid="session-traces"
        title="Open this conversation's traces (eng.session.id)"
      >
        <Activity size={12} /> Traces
      </Link>
      <span className="flex-1" />
      <ContextMeter usage={usage} onCompact={onCompact} />
    </div>
  );
});
