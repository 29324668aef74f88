import { Minus, Plus, RotateCcw } from 'lucide-react';
import { useMemo, useState } from 'react';
import { formatDuration } from '../../lib/format.ts';
import { Button, IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { Tabs } from '../ui/tabs.tsx';
import { serviceColor } from './span-facts.ts';
import type { SpanNode, TraceModel } from './trace-model.ts';

const FRAME_H = 22;
const GAP = 2;

/**
 * Seed 2.6 Flame Graph: spans stacked on their parent, width = duration. Click selects a span,
 * double-click zooms into it, the buttons zoom around the selection; colour by service or status.
 * Lazily loaded (its own chunk).
 */
export default function FlameGraph({
  model,
  selectedId,
  onSelect,
}: {
  model: TraceModel;
  selectedId?: string;
  onSelect: (spanId: string) => void;
}) {
  const [window_, setWindow] = useState<{ start: number; end: number } | null>(null);
  const [colorBy, setColorBy] = useState<'service' | 'status'>('service');
  const view = window_ ?? { start: model.startMs, end: model.endMs };
  const span = Math.max(view.end - view.start, 1e-6);
  const maxDepth = useMemo(() => model.nodes.reduce((m, n) => Math.max(m, n.depth), 0), [model]);
  const zoomLevel = model.durationMs > 0 ? model.durationMs / span : 1;

  const zoomBy = (factor: number) => {
    const selected = selectedId ? model.byId.get(selectedId) : undefined;
    const center = selected
      ? (Math.max(selected.startMs, view.start) + Math.min(selected.endMs, view.end)) / 2
      : (view.start + view.end) / 2;
    const next = Math.min(model.durationMs, Math.max(model.durationMs / 200, span / factor));
    let start = center - next / 2;
    start = Math.max(model.startMs, Math.min(start, model.endMs - next));
    if (next >= model.durationMs) setWindow(null);
    else setWindow({ start, end: start + next });
  };
  const frameColor = (n: SpanNode) => {
    if (colorBy === 'status') return n.error ? 'var(--c-bad)' : n.pending ? 'var(--c-warn)' : 'var(--c-ok)';
    return n.error ? 'var(--c-bad)' : serviceColor(n.service, 0.8);
  };

  return (
    <div className="flex h-full min-h-0 flex-col" data-testid="flame-graph">
      <div className="flex flex-wrap items-center gap-2 border-b border-line px-3 py-2">
        <Tabs
          label="Colour frames by"
          items={[
            { value: 'service', label: 'By service' },
            { value: 'status', label: 'By status' },
          ]}
          value={colorBy}
          onChange={setColorBy}
        />
        <div className="ml-auto flex items-center gap-1">
          <span className="mr-1 text-xs text-muted tabular-nums">{zoomLevel.toFixed(zoomLevel < 10 ? 1 : 0)}×</span>
          <IconButton icon={Minus} label="Zoom out" onClick={() => zoomBy(0.5)} disabled={!window_} />
          <IconButton icon={Plus} label="Zoom in" onClick={() => zoomBy(2)} />
          <Button size="xs" variant="ghost" icon={RotateCcw} onClick={() => setWindow(null)} disabled={!window_}>
            Reset zoom
          </Button>
        </div>
      </div>
      <div className="relative flex justify-between border-b border-line px-3 py-1 font-mono text-[10.5px] text-faint tabular-nums">
        <span>+{formatDuration(view.start - model.startMs)}</span>
        <span>{formatDuration(span)} shown</span>
        <span>+{formatDuration(view.end - model.startMs)}</span>
      </div>
      <div className="min-h-0 flex-1 overflow-auto p-3">
        <div className="relative" style={{ height: (maxDepth + 1) * (FRAME_H + GAP) }}>
          {model.nodes.map((n) => {
            const a = Math.max(n.startMs, view.start);
            const b = Math.min(Math.max(n.endMs, n.startMs + span / 2000), view.end);
            if (b <= a) return null;
            const left = ((a - view.start) / span) * 100;
            const width = ((b - a) / span) * 100;
            if (width < 0.05) return null;
            const selected = n.id === selectedId;
            return (
              <button
                type="button"
                key={n.id}
                data-testid="flame-frame"
                data-span-id={n.id}
                onClick={() => onSelect(n.id)}
                onDoubleClick={() => {
                  onSelect(n.id);
                  if (n.durationMs > 0) setWindow({ start: n.startMs, end: n.endMs });
                }}
                title={`${n.span.name}\n${n.service} · ${formatDuration(n.durationMs)} (self ${formatDuration(n.selfMs)})`}
                className={cn(
                  'absolute cursor-pointer overflow-hidden rounded-[3px] px-1.5 text-left text-[11px] leading-[22px] font-medium whitespace-nowrap text-white transition-[filter] hover:brightness-110',
                  selected && 'outline-2 outline-offset-1 outline-fg',
                )}
                style={{
                  left: `${left}%`,
                  width: `calc(${width}% - 1px)`,
                  top: n.depth * (FRAME_H + GAP),
                  height: FRAME_H,
                  background: frameColor(n),
                }}
              >
                <span className="drop-shadow-[0_1px_1px_rgb(0_0_0/0.45)]">
                  {n.span.name} <span className="opacity-80">{formatDuration(n.durationMs)}</span>
                </span>
              </button>
            );
          })}
        </div>
        <p className="mt-3 text-[11.5px] text-faint">Click a frame to select its span; double-click to zoom into it.</p>
      </div>
    </div>
  );
}
