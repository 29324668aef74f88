import { X } from 'lucide-react';
import type { ReactNode } from 'react';
import { cn } from './cn.ts';

/**
 * The right-hand detail pane of list pages: beside the list on wide screens, a full-screen sheet
 * on narrow ones. Escape closes it (handled by the page, which owns the selection in the URL).
 */
export function DetailPanel({
  title,
  subtitle,
  actions,
  onClose,
  children,
  className,
  testId,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
  onClose: () => void;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  return (
    <aside
      data-testid={testId}
      className={cn(
        'fixed inset-0 z-30 flex flex-col bg-surface lg:static lg:z-auto lg:w-[min(46%,620px)] lg:shrink-0 lg:border-l lg:border-line',
        className,
      )}
    >
      <header className="flex items-start gap-3 border-b border-line px-4 py-3">
        <div className="min-w-0 flex-1">
          <div className="flex min-w-0 items-center gap-1.5">{title}</div>
          {subtitle ? <div className="mt-1 text-[12.5px] text-muted">{subtitle}</div> : null}
        </div>
        {actions}
        <button
          type="button"
          onClick={onClose}
          aria-label="Close details"
          title="Close (Esc)"
          className="flex size-7 shrink-0 cursor-pointer items-center justify-center rounded-md text-faint hover:bg-surface-2 hover:text-fg"
        >
          <X size={16} />
        </button>
      </header>
      <div className="min-h-0 flex-1 overflow-y-auto">{children}</div>
    </aside>
  );
}

/** A titled block inside a detail pane. */
export function PanelSection({
  title,
  children,
  actions,
  className,
}: {
  title: ReactNode;
  children: ReactNode;
  actions?: ReactNode;
  className?: string;
}) {
  return (
    <section className={cn('border-b border-line px-4 py-4 last:border-b-0', className)}>
      <div className="mb-2.5 flex items-center justify-between gap-2">
        <h3 className="text-[11px] font-semibold tracking-wider text-faint uppercase">{title}</h3>
        {actions}
      </div>
      {children}
    </section>
  );
}
