import type { ReactNode } from 'react';
import { CountBadge } from './badge.tsx';
import { cn } from './cn.ts';

export interface TabItem<T extends string> {
  value: T;
  label: ReactNode;
  count?: number;
}

/** Filter tabs with count badges (seed 2.3 "per-type filter tabs"). */
export function Tabs<T extends string>({
  items,
  value,
  onChange,
  className,
  label,
}: {
  items: TabItem<T>[];
  value: T;
  onChange: (v: T) => void;
  className?: string;
  label: string;
}) {
  return (
    <div
      role="tablist"
      aria-label={label}
      className={cn('flex items-center gap-0.5 overflow-x-auto rounded-lg border border-line bg-surface-2 p-0.5', className)}
    >
      {items.map((item) => {
        const active = item.value === value;
        return (
          <button
            key={item.value}
            type="button"
            role="tab"
            aria-selected={active}
            onClick={() => onChange(item.value)}
            className={cn(
              'inline-flex h-7 shrink-0 cursor-pointer items-center gap-1.5 rounded-md px-2.5 text-[13px] font-medium whitespace-nowrap transition-colors',
              active ? 'bg-surface text-fg shadow-card' : 'text-muted hover:text-fg',
            )}
          >
            {item.label}
            {item.count !== undefined ? <CountBadge value={item.count} active={active} /> : null}
          </button>
        );
      })}
    </div>
  );
}

/** Underlined section tabs for detail panes. */
export function SectionTabs<T extends string>({
  items,
  value,
  onChange,
  label,
}: {
  items: TabItem<T>[];
  value: T;
  onChange: (v: T) => void;
  label: string;
}) {
  return (
    <div role="tablist" aria-label={label} className="flex items-center gap-4 border-b border-line px-4">
      {items.map((item) => {
        const active = item.value === value;
        return (
          <button
            key={item.value}
            type="button"
            role="tab"
            aria-selected={active}
            onClick={() => onChange(item.value)}
            className={cn(
              '-mb-px inline-flex h-9 cursor-pointer items-center gap-1.5 border-b-2 text-[13px] font-medium transition-colors',
              active ? 'border-accent text-fg' : 'border-transparent text-muted hover:text-fg',
            )}
          >
            {item.label}
            {item.count !== undefined ? <CountBadge value={item.count} active={active} /> : null}
          </button>
        );
      })}
    </div>
  );
}
