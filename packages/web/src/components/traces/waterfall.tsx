import { useVirtualizer } from '@tanstack/react-virtual';
import { ChevronRight, ChevronsDownUp, ChevronsUpDown, CircleAlert, Route } from 'lucide-react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { formatDuration } from '../../lib/format.ts';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { SearchInput } from '../ui/inputs.tsx';
import { ResizeHandle, useStoredSize } from './resizable.tsx';
import { functionIdOf, serviceColor } from './span-facts.ts';
import { ancestorsOf, type SpanNode, type TraceModel, visibleRows } from './trace-model.ts';
import { useElementWidth } from './use-element-width.ts';

const ROW_HEIGHT = 30;

/**
 * Seed 2.6 Waterfall (the default view): spans by start time and duration, expand/collapse per
 * span, critical-path highlight, a resizable span-name column. Virtualised (TanStack Virtual) so a
 * trace of thousands of spans scrolls smoothly (console-worker §3.2).
 */
export function Waterfall({ model, selectedId, onSelect }: { model: TraceModel; selectedId?: string; onSelect: (spanId: string) => void }) {
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const [showCritical, setShowCritical] = useState(true);
  const [find, setFind] = useState('');
  const nameCol = useStoredSize('name-col', 280, 160, 760);
  const frame = useRef<HTMLDivElement>(null);
  const frameWidth = useElementWidth(frame);
  // the timeline keeps at least 40% of the view, whatever width the name column was dragged to
  const nameWidth = frameWidth > 0 ? Math.min(nameCol.size, Math.max(140, frameWidth * 0.6)) : nameCol.size;
  const timelineWidth = Math.max(0, frameWidth - nameWidth - 62);
  const showService = nameWidth >= 300;
  const rows = useMemo(() => visibleRows(model, collapsed), [model, collapsed]);
  const critical = useMemo(() => new Set(model.criticalPath.map((n) => n.id)), [model]);
  const needle = find.trim().toLowerCase();
  const matches = useMemo(() => {
    if (!needle) return null;
    return new Set(
      model.nodes
        .filter(
          (n) =>
            n.span.name.toLowerCase().includes(needle) ||
            n.service.toLowerCase().includes(needle) ||
            (functionIdOf(n.span) ?? '').includes(needle),
        )
        .map((n) => n.id),
    );
  }, [model, needle]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 16,
  });

  // a span selected elsewhere (breadcrumb, flame graph, link) is revealed and scrolled to
  useEffect(() => {
    if (!selectedId) return;
    const node = model.byId.get(selectedId);
    if (!node) return;
    const hidden = ancestorsOf(node).filter((a) => collapsed.has(a.id));
    if (hidden.length > 0) {
      setCollapsed((prev) => {
        const next = new Set(prev);
        for (const a of hidden) next.delete(a.id);
        return next;
      });
      return;
    }
    const index = rows.indexOf(node);
    if (index >= 0) virtualizer.scrollToIndex(index, { align: 'auto' });
  }, [selectedId, model, rows, collapsed, virtualizer]);

  const toggle = (id: string) =>
    setCollapsed((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  // tree keyboard: ↑/↓ move the selection, ←/→ collapse/expand, Enter selects
  const onRowKey = (e: React.KeyboardEvent, index: number) => {
    const node = rows[index] as SpanNode;
    const focus = (i: number) => {
      const target = rows[i];
      if (!target) return;
      onSelect(target.id);
      requestAnimationFrame(() => scroller.current?.querySelector<HTMLElement>(`[data-span-id="${target.id}"]`)?.focus());
    };
    if (e.key === 'ArrowDown') focus(index + 1);
    else if (e.key === 'ArrowUp') focus(index - 1);
    else if (e.key === 'ArrowRight' && node.children.length > 0 && collapsed.has(node.id)) toggle(node.id);
    else if (e.key === 'ArrowLeft' && node.children.length > 0 && !collapsed.has(node.id)) toggle(node.id);
    else if (e.key === 'Enter' || e.key === ' ') onSelect(node.id);
    else return;
    e.preventDefault();
  };
  const total = model.durationMs || 1;
  const ticks = timelineWidth > 480 ? [0, 0.25, 0.5, 0.75, 1] : timelineWidth > 220 ? [0, 0.5, 1] : [0, 1];

  return (
    <div ref={frame} className="flex h-full min-h-0 flex-col" data-testid="waterfall">
      <div className="flex flex-wrap items-center gap-2 border-b border-line px-3 py-2">
        <Button size="xs" variant="ghost" icon={ChevronsUpDown} onClick={() => setCollapsed(new Set())}>
          Expand all
        </Button>
        <Button
          size="xs"
          variant="ghost"
          icon={ChevronsDownUp}
          onClick={() => setCollapsed(new Set(model.nodes.filter((n) => n.children.length > 0 && n.parent).map((n) => n.id)))}
        >
          Collapse all
        </Button>
        <Button
          size="xs"
          variant={showCritical ? 'subtle' : 'ghost'}
          icon={Route}
          aria-pressed={showCritical}
          onClick={() => setShowCritical((v) => !v)}
          title="Highlight the critical path: the longest child at every level"
        >
          Critical path
        </Button>
        <SearchInput value={find} onChange={setFind} placeholder="Find span…" className="ml-auto w-40" />
        {matches ? (
          <span className="text-xs text-muted tabular-nums">
            {matches.size} match{matches.size === 1 ? '' : 'es'}
          </span>
        ) : null}
      </div>
      <div className="flex border-b border-line bg-surface-2/60 text-[11px] font-semibold tracking-wide text-faint uppercase">
        <div className="flex shrink-0 items-center px-3 py-1.5" style={{ width: nameWidth }}>
          Span
        </div>
        <ResizeHandle
          label="Span name column"
          size={nameWidth}
          min={nameCol.min}
          max={nameCol.max}
          direction={1}
          onResize={nameCol.setSize}
          onReset={nameCol.reset}
        />
        <div className="relative mr-14 flex-1 py-1.5">
          {ticks.map((t) => (
            <span
              key={t}
              className="absolute font-mono text-[10.5px] font-normal tracking-normal normal-case tabular-nums"
              style={
                t === 1
                  ? { right: 0, transform: 'translateX(50%)' }
                  : t === 0
                    ? { left: 0 }
                    : { left: `${t * 100}%`, transform: 'translateX(-50%)' }
              }
            >
              {t === 0 ? '0' : formatDuration(total * t)}
            </span>
          ))}
        </div>
      </div>
      <div ref={scroller} className="min-h-0 flex-1 overflow-auto" role="tree" aria-label="Spans">
        <div className="relative" style={{ height: virtualizer.getTotalSize() }}>
          {/* tick guides */}
          <div className="pointer-events-none absolute inset-y-0 right-14" style={{ left: nameWidth + 6 }}>
            {ticks.slice(1, -1).map((t) => (
              <span key={t} className="absolute inset-y-0 w-px bg-line/70" style={{ left: `${t * 100}%` }} />
            ))}
          </div>
          {virtualizer.getVirtualItems().map((item) => {
            const node = rows[item.index] as SpanNode;
            const offset = ((node.startMs - model.startMs) / total) * 100;
            const width = Math.max(0.4, (node.durationMs / total) * 100);
            const selected = node.id === selectedId;
            const onPath = showCritical && critical.has(node.id);
            const dimmed = matches !== null && !matches.has(node.id);
            // the duration sits right of the bar, else left of it, else inside it
            const label = offset + width < 90 ? 'right' : offset > 22 ? 'left' : 'inside';
            return (
              <div
                key={node.id}
                role="treeitem"
                aria-selected={selected}
                aria-expanded={node.children.length > 0 ? !collapsed.has(node.id) : undefined}
                aria-level={node.depth + 1}
                data-testid="waterfall-row"
                data-span-id={node.id}
                tabIndex={selected || (!selectedId && item.index === 0) ? 0 : -1}
                onClick={() => onSelect(node.id)}
                onKeyDown={(e) => onRowKey(e, item.index)}
                className={cn(
                  'absolute inset-x-0 flex cursor-pointer items-center border-b border-line/50 text-[12.5px] hover:bg-surface-2',
                  selected && 'bg-accent-soft hover:bg-accent-soft',
                  dimmed && 'opacity-40',
                )}
                style={{ top: item.start, height: ROW_HEIGHT }}
              >
                <div
                  className="flex shrink-0 items-center gap-1 overflow-hidden pr-2"
                  style={{ width: nameWidth + 6, paddingLeft: 8 + Math.min(node.depth, 24) * 14 }}
                >
                  {node.children.length > 0 ? (
                    <button
                      type="button"
                      aria-label={collapsed.has(node.id) ? `Expand ${node.span.name}` : `Collapse ${node.span.name}`}
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(node.id);
                      }}
                      className="flex size-4.5 shrink-0 cursor-pointer items-center justify-center rounded text-faint hover:bg-surface-3 hover:text-fg"
                    >
                      <ChevronRight size={12} className={cn('transition-transform', !collapsed.has(node.id) && 'rotate-90')} />
                    </button>
                  ) : (
                    <span className="w-4.5 shrink-0" />
                  )}
                  <span className="h-3.5 w-1 shrink-0 rounded-full" style={{ background: serviceColor(node.service) }} />
                  <span className={cn('truncate', onPath && 'font-semibold', node.error ? 'text-bad' : 'text-fg')} title={node.span.name}>
                    {node.span.name}
                  </span>
                  {node.error ? <CircleAlert size={12} className="shrink-0 text-bad" aria-label="error" /> : null}
                  {showService ? (
                    <span className="ml-auto max-w-[40%] shrink-0 truncate pl-2 text-[11px] text-faint">{node.service}</span>
                  ) : null}
                </div>
                <div className="relative mr-14 h-full flex-1">
                  <div
                    className={cn(
                      'absolute top-1/2 h-3 -translate-y-1/2 rounded-[3px]',
                      node.pending && 'animate-pulse-dot',
                      onPath && 'ring-2 ring-accent/60 ring-offset-1 ring-offset-surface',
                    )}
                    style={{
                      left: `${offset}%`,
                      width: `${width}%`,
                      background: node.error ? 'var(--c-bad)' : serviceColor(node.service, 0.85),
                    }}
                  />
                  <span
                    className={cn(
                      'absolute top-1/2 -translate-y-1/2 font-mono text-[10.5px] whitespace-nowrap tabular-nums',
                      label === 'inside' ? 'font-semibold text-white drop-shadow-[0_1px_1px_rgb(0_0_0/0.5)]' : 'text-muted',
                    )}
                    style={
                      label === 'right'
                        ? { left: `calc(${offset + width}% + 6px)` }
                        : label === 'left'
                          ? { right: `calc(${100 - offset}% + 6px)` }
                          : { right: `calc(${100 - offset - width}% + 6px)` }
                    }
                  >
                    {formatDuration(node.durationMs)}
                    {node.pending ? ' …' : ''}
                  </span>
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
