import { Link } from '@tanstack/react-router';
import { describeOutage, useConnection } from '../../api/client.ts';
import { StatusDot } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';

/** Engine connection at a glance; links to the Config page's probes. */
export function ConnectionPill({ compact }: { compact?: boolean }) {
  const conn = useConnection();
  const open = conn.status === 'open';
  const label = open ? 'Engine connected' : conn.status === 'connecting' ? 'Connecting…' : 'Engine unreachable';
  const tone = open ? 'ok' : conn.status === 'connecting' ? 'warn' : 'bad';
  return (
    <Link
      to="/config"
      data-testid="connection-pill"
      data-connection={conn.status}
      title={open ? `Connected through ${conn.url}` : describeOutage(conn)}
      className={cn(
        'flex items-center gap-2 rounded-lg border text-[12.5px] font-medium transition-colors',
        compact ? 'h-7 px-2' : 'h-8 px-2.5',
        open ? 'border-line bg-surface-2 text-muted hover:text-fg' : 'border-bad/30 bg-bad-soft text-bad',
      )}
    >
      <StatusDot tone={tone} pulse={!open} />
      {compact ? null : <span className="truncate">{label}</span>}
    </Link>
  );
}
