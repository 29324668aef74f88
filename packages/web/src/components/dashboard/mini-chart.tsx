import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { useTheme } from '../../lib/theme.ts';

export interface MiniSeries {
  label: string;
  values: number[];
  /** CSS custom property with the colour, e.g. `--c-accent`. */
  colorVar: string;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888888';
}

/** Canvas fill styles do not take color-mix(): turn `#rrggbb` into an rgba() string. */
function withAlpha(hex: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return hex;
  return `rgba(${Number.parseInt(m[1] as string, 16)}, ${Number.parseInt(m[2] as string, 16)}, ${Number.parseInt(m[3] as string, 16)}, ${alpha})`;
}

const AXIS_FONT = '10px Inter Variable, sans-serif';
/** Half of the widest time label ("23:59" at 10 px) and a little air. */
const AXIS_LABEL_ROOM = 18;

/** A small uPlot area chart that follows its container's width and the theme. */
export function MiniChart({
  times,
  series,
  height = 120,
  label,
  unit = '',
}: {
  times: number[];
  series: MiniSeries[];
  height?: number;
  label: string;
  unit?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useTheme();

  // (re)create on theme or shape change: colours are baked into the series
  // biome-ignore lint/correctness/useExhaustiveDependencies: data updates go through setData below
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const grid = cssVar('--c-line');
    const text = cssVar('--c-faint');
    // the time labels last drawn, to check after each draw that none is cut by the canvas edge
    let timeLabels: Array<{ at: number; text: string }> = [];
    const opts: uPlot.Options = {
      width: el.clientWidth || 300,
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      // room right of the plot for half of the last time label, which is centred on its tick
      padding: [8, AXIS_LABEL_ROOM, 0, 0],
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] } },
      axes: [
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { show: false },
          font: AXIS_FONT,
          space: 70,
          size: 22,
          // HH:MM only: the default two-line date label does not fit a mini chart
          values: (_u, splits) => {
            const labels = splits.map((s) => new Date(s * 1000).toTimeString().slice(0, 5));
            timeLabels = splits.map((at, i) => ({ at, text: labels[i] as string }));
            return labels;
          },
        },
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { show: false },
          font: AXIS_FONT,
          size: 34,
          values: (_u, vals) => vals.map((v) => `${v}${unit}`),
        },
      ],
      series: [
        {},
        ...series.map((s) => {
          const color = cssVar(s.colorVar);
          return { label: s.label, stroke: color, width: 1.75, fill: withAlpha(color, 0.16), points: { show: false } };
        }),
      ],
      hooks: {
        // how many time labels reach past the canvas (data-clipped-labels): what a reader would see cut
        draw: [
          (u) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.font = AXIS_FONT;
            const left = u.bbox.left / uPlot.pxRatio;
            let clipped = 0;
            for (const { at, text } of timeLabels) {
              const centre = left + u.valToPos(at, 'x');
              const half = ctx.measureText(text).width / 2;
              if (centre - half < 0 || centre + half > u.width) clipped++;
            }
            ctx.restore();
            el.dataset.clippedLabels = String(clipped);
          },
        ],
      },
    };
    const u = new uPlot(opts, [times.map((t) => t / 1000), ...series.map((s) => s.values)], el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [theme, height, series.length, unit]);

  useEffect(() => {
    plot.current?.setData([times.map((t) => t / 1000), ...series.map((s) => s.values)]);
  }, [times, series]);

  // what the chart draws, readable without the canvas (assistive tech, tests): bucket starts in ms and each series' values
  return (
    <div
      ref={host}
      role="img"
      aria-label={label}
      className="w-full"
      data-times={times.join(',')}
      data-values={series.map((s) => s.values.join(',')).join(';')}
    />
  );
}
