import { useVirtualizer } from '@tanstack/react-virtual';
import { Boxes, ChevronDown, ChevronRight } from 'lucide-react';
import { useCallback, useEffect, useRef } from 'react';
import { triggerTone } from '../../lib/trigger-kind.ts';
import { Badge, CountBadge, StatusDot } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import type { FunctionRow } from './function-rows.ts';

// narrower than `sm` the worker column goes (the detail pane names it)
const GRID =
  'grid grid-cols-[minmax(0,2.4fr)_minmax(0,1.5fr)_minmax(0,1fr)_84px] max-sm:grid-cols-[minmax(0,1.6fr)_minmax(0,1fr)_72px] items-center gap-3';

/** The function table, virtualised so 10,000 functions scroll smoothly (issue 6 budgets). */
export function FunctionList({
  rows,
  selected,
  onSelect,
  onToggleGroup,
  onToggleSection,
  compact,
}: {
  rows: FunctionRow[];
  selected?: string;
  onSelect: (id: string) => void;
  onToggleGroup: (namespace: string) => void;
  onToggleSection: () => void;
  compact?: boolean;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  // stable callbacks: the virtualizer rebuilds its 10,000-row measurement cache when they change
  const estimateSize = useCallback((i: number) => (rows[i]?.kind === 'section' ? 52 : rows[i]?.kind === 'group' ? 34 : 46), [rows]);
  const getItemKey = useCallback(
    (i: number) => {
      const row = rows[i];
      return row?.kind === 'section' ? 's:platform' : row?.kind === 'group' ? `g:${row.namespace}` : `f:${row?.fn.function_id}`;
    },
    [rows],
  );
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize,
    overscan: 8,
    getItemKey,
  });

  // bring the selected function into view when it was chosen elsewhere (palette, URL)
  const lastScrolled = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!selected || lastScrolled.current === selected) return;
    const index = rows.findIndex((r) => r.kind === 'function' && r.fn.function_id === selected);
    if (index >= 0) {
      lastScrolled.current = selected;
      virtualizer.scrollToIndex(index, { align: 'auto' });
    }
  }, [selected, rows, virtualizer]);

  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <div
        aria-hidden="true"
        className={cn(
          GRID,
          'h-9 shrink-0 border-b border-line bg-surface-2/60 px-4 text-[11px] font-semibold tracking-wider text-faint uppercase',
        )}
      >
        <span>Function ID</span>
        <span>Triggers</span>
        <span className={compact ? 'hidden' : 'max-sm:hidden'}>Worker</span>
        <span className={compact ? 'hidden' : ''}>Status</span>
      </div>
      <div ref={scroller} data-testid="function-scroller" className="min-h-0 flex-1 overflow-auto">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative', contain: 'strict' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index] as FunctionRow;
            // containment: a row's layout and paint never reach beyond it (10,000-row scroll budget)
            const style = {
              position: 'absolute' as const,
              top: 0,
              left: 0,
              width: '100%',
              height: item.size,
              transform: `translateY(${item.start}px)`,
              contain: 'strict' as const,
            };
            if (row.kind === 'section') {
              return (
                <button
                  key={item.key}
                  type="button"
                  style={style}
                  onClick={onToggleSection}
                  aria-expanded={!row.collapsed}
                  data-testid="function-section-platform"
                  className="flex cursor-pointer items-center gap-2.5 border-y border-line bg-surface-2 px-4 text-left hover:bg-surface-3/70"
                >
                  {row.collapsed ? (
                    <ChevronRight size={14} className="shrink-0 text-muted" />
                  ) : (
                    <ChevronDown size={14} className="shrink-0 text-muted" />
                  )}
                  <Boxes size={15} className="shrink-0 text-faint" />
                  <span className="min-w-0 flex-1">
                    <span className="flex items-center gap-2 text-[12.5px] font-semibold text-fg">
                      Platform workers <CountBadge value={row.count} />
                    </span>
                    <span
                      className="block truncate text-[11.5px] text-muted"
                      title="The workers eng brings with it, not your application's"
                    >
                      Chat stack, worktrees, console and MCP
                    </span>
                  </span>
                </button>
              );
            }
            if (row.kind === 'group') {
              return (
                <button
                  key={item.key}
                  type="button"
                  style={style}
                  onClick={() => onToggleGroup(row.namespace)}
                  aria-expanded={!row.collapsed}
                  data-testid={`ns-${row.namespace}`}
                  className="flex cursor-pointer items-center gap-2 border-b border-line bg-bg/70 px-4 text-left text-[11.5px] font-semibold tracking-wide text-muted uppercase hover:text-fg"
                >
                  {row.collapsed ? <ChevronRight size={13} /> : <ChevronDown size={13} />}
                  <span className="font-mono normal-case">{row.namespace}</span>
                  <CountBadge value={row.count} />
                </button>
              );
            }
            const { fn, triggers, worker } = row;
            const active = fn.function_id === selected;
            return (
              <button
                type="button"
                key={item.key}
                aria-current={active ? 'true' : undefined}
                data-function-id={fn.function_id}
                style={style}
                onClick={() => onSelect(fn.function_id)}
                onKeyDown={(e) => {
                  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                    e.preventDefault();
                    moveFocus(scroller.current, e.currentTarget, e.key === 'ArrowDown' ? 1 : -1);
                  }
                }}
                className={cn(
                  GRID,
                  'cursor-pointer border-b border-line px-4 text-left outline-none focus-visible:bg-surface-2',
                  active ? 'bg-accent-soft/70' : 'hover:bg-surface-2/70',
                )}
              >
                <span className="min-w-0">
                  <span className={cn('block truncate font-mono text-[12.5px]', active ? 'text-accent' : 'text-fg')}>{fn.function_id}</span>
                  {fn.description ? <span className="block truncate text-[11.5px] text-muted">{fn.description}</span> : null}
                </span>
                <span className="flex min-w-0 items-center gap-1 overflow-hidden">
                  {triggers.count === 0 ? (
                    <span className="text-[12px] text-faint">none</span>
                  ) : (
                    <>
                      <span className="mr-0.5 text-[12px] font-medium text-fg tabular-nums">{triggers.count}</span>
                      {triggers.types.slice(0, 3).map((t) => (
                        <Badge key={t} tone={triggerTone(t)} mono>
                          {t}
                        </Badge>
                      ))}
                      {triggers.types.length > 3 ? <span className="text-[11px] text-faint">+{triggers.types.length - 3}</span> : null}
                    </>
                  )}
                </span>
                <span
                  className={cn(
                    'truncate text-[12.5px] text-muted max-sm:hidden',
                    worker.status === 'http' && 'font-mono text-[11.5px]',
                    compact && 'hidden',
                  )}
                  title={worker.status === 'http' ? `The engine calls ${worker.name}` : undefined}
                >
                  {worker.name}
                </span>
                <span className={cn('flex items-center gap-1.5 text-[12px]', compact && 'hidden')}>
                  {worker.status === 'http' ? (
                    <Badge tone="accent" mono>
                      HTTP
                    </Badge>
                  ) : (
                    <>
                      <StatusDot tone={worker.status === 'busy' ? 'warn' : 'ok'} />
                      <span className="text-muted">
                        {worker.status === 'busy' ? 'Busy' : worker.status === 'engine' ? 'Built-in' : 'Ready'}
                      </span>
                    </>
                  )}
                </span>
              </button>
            );
          })}
        </div>
      </div>
    </div>
  );
}

/** Arrow keys move between the rendered rows in screen order. */
function moveFocus(container: HTMLElement | null, from: HTMLElement, step: 1 | -1): void {
  const all = [...(container?.querySelectorAll<HTMLElement>('[data-function-id]') ?? [])].sort(
    (a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top,
  );
  const next = all[all.indexOf(from) + step];
  next?.focus();
  next?.scrollIntoView({ block: 'nearest' });
}
