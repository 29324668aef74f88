import { CircleAlert, CircleCheck, LoaderCircle } from 'lucide-react';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import type { SpanStatusLabel } from './span-facts.ts';

/** Seed 2.6 Status column: OK, Error or Pending. */
export function StatusBadge({ status, className }: { status: SpanStatusLabel; className?: string }) {
  if (status === 'Error')
    return (
      <Badge tone="bad" className={className}>
        <CircleAlert size={11} /> Error
      </Badge>
    );
  if (status === 'Pending')
    return (
      <Badge tone="warn" className={className}>
        <LoaderCircle size={11} className="animate-spin" /> Pending
      </Badge>
    );
  return (
    <Badge tone="ok" className={className}>
      <CircleCheck size={11} /> OK
    </Badge>
  );
}

export function StatusIcon({ status, className }: { status: SpanStatusLabel; className?: string }) {
  const label = `Status ${status}`;
  if (status === 'Error') return <CircleAlert size={14} aria-label={label} className={cn('shrink-0 text-bad', className)} />;
  if (status === 'Pending')
    return <LoaderCircle size={14} aria-label={label} className={cn('shrink-0 animate-spin text-warn', className)} />;
  return <CircleCheck size={14} aria-label={label} className={cn('shrink-0 text-ok', className)} />;
}
