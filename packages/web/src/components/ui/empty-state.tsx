import type { LucideIcon } from 'lucide-react';
import type { ReactNode } from 'react';
import { cn } from './cn.ts';

/** Empty states tell the user what to do next (issue 6, Everyday quality). */
export function EmptyState({
  icon: Icon,
  title,
  children,
  action,
  className,
  compact,
}: {
  icon?: LucideIcon;
  title: ReactNode;
  children?: ReactNode;
  action?: ReactNode;
  className?: string;
  compact?: boolean;
}) {
  return (
    <div
      className={cn('flex flex-col items-center justify-center text-center', compact ? 'gap-2 px-4 py-8' : 'gap-3 px-6 py-16', className)}
    >
      {Icon ? (
        <div className="flex size-10 items-center justify-center rounded-xl border border-line bg-surface-2 text-muted">
          <Icon size={18} />
        </div>
      ) : null}
      <div className="max-w-md">
        <p className="text-sm font-semibold text-fg">{title}</p>
        {children ? <div className="mt-1 text-[13px] leading-relaxed text-muted">{children}</div> : null}
      </div>
      {action}
    </div>
  );
}

/** Inline error box for a failed query or call. */
export function ErrorNote({ title = 'Something went wrong', error, className }: { title?: string; error: unknown; className?: string }) {
  const e = error as { code?: string; message?: string } | undefined;
  return (
    <div role="alert" className={cn('rounded-lg border border-bad/30 bg-bad-soft px-3 py-2 text-[13px] text-bad', className)}>
      <p className="font-medium">{title}</p>
      <p className="mt-0.5 font-mono text-xs break-words opacity-90">
        {e?.code ? `${e.code}: ` : ''}
        {e?.message ?? String(error)}
      </p>
    </div>
  );
}
