import { type PointerEvent as ReactPointerEvent, useCallback, useState } from 'react';
import { cn } from '../ui/cn.ts';

/**
 * Resizable panels (console-worker §3.2: drag to resize, double-click resets). The size is kept in
 * localStorage so the layout survives a reload.
 */
export function useStoredSize(key: string, initial: number, min: number, max: number) {
  const storageKey = `eng-traces-${key}`;
  const clamp = useCallback((v: number) => Math.round(Math.min(max, Math.max(min, v))), [min, max]);
  const [size, setSizeState] = useState<number>(() => {
    try {
      const stored = Number(localStorage.getItem(storageKey));
      return stored > 0 ? clamp(stored) : initial;
    } catch {
      return initial;
    }
  });
  const setSize = useCallback(
    (v: number) => {
      const next = clamp(v);
      setSizeState(next);
      try {
        localStorage.setItem(storageKey, String(next));
      } catch {
        // private mode: the size lasts for this page only
      }
    },
    [clamp, storageKey],
  );
  const reset = useCallback(() => {
    setSizeState(initial);
    try {
      localStorage.removeItem(storageKey);
    } catch {
      // ignore
    }
  }, [initial, storageKey]);
  return { size, setSize, reset, min, max };
}

/**
 * A drag handle between two panels. Vertical (the default, panels side by side): `direction: 1`
 * grows the panel when dragged right (panel on the left), `-1` when dragged left (panel on the
 * right). Horizontal (panels stacked): `1` grows the panel when dragged down (panel above), `-1`
 * when dragged up (panel below). Arrow keys resize by 16 px.
 */
export function ResizeHandle({
  size,
  onResize,
  onReset,
  direction,
  label,
  min,
  max,
  className,
  orientation = 'vertical',
}: {
  size: number;
  onResize: (size: number) => void;
  onReset: () => void;
  direction: 1 | -1;
  label: string;
  min: number;
  max: number;
  className?: string;
  orientation?: 'vertical' | 'horizontal';
}) {
  const [dragging, setDragging] = useState(false);
  const vertical = orientation === 'vertical';
  const onPointerDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    e.preventDefault();
    const start = vertical ? e.clientX : e.clientY;
    const startSize = size;
    const target = e.currentTarget;
    target.setPointerCapture(e.pointerId);
    setDragging(true);
    const move = (ev: PointerEvent) => onResize(startSize + direction * ((vertical ? ev.clientX : ev.clientY) - start));
    const up = () => {
      setDragging(false);
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
      target.removeEventListener('pointercancel', up);
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', up);
    target.addEventListener('pointercancel', up);
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a focusable splitter has no native element
    <div
      role="separator"
      aria-orientation={orientation}
      aria-label={label}
      aria-valuenow={size}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      title={`${label}: drag to resize, double-click to reset`}
      onPointerDown={onPointerDown}
      onDoubleClick={onReset}
      onKeyDown={(e) => {
        const [less, more] = vertical ? ['ArrowLeft', 'ArrowRight'] : ['ArrowUp', 'ArrowDown'];
        if (e.key === less || e.key === more) {
          e.preventDefault();
          onResize(size + (e.key === more ? 16 : -16) * direction);
        }
      }}
      className={cn(
        'group relative z-10 shrink-0 touch-none select-none outline-none',
        vertical
          ? cn(
              'w-1.5 cursor-col-resize',
              'before:absolute before:inset-y-0 before:left-1/2 before:w-px before:-translate-x-1/2 before:bg-line before:transition-colors',
              'hover:before:w-0.5 hover:before:bg-accent focus-visible:before:w-0.5 focus-visible:before:bg-accent',
              dragging && 'before:w-0.5 before:bg-accent',
            )
          : cn(
              'h-1.5 w-full cursor-row-resize',
              'before:absolute before:inset-x-0 before:top-1/2 before:h-px before:-translate-y-1/2 before:bg-line before:transition-colors',
              'hover:before:h-0.5 hover:before:bg-accent focus-visible:before:h-0.5 focus-visible:before:bg-accent',
              dragging && 'before:h-0.5 before:bg-accent',
            ),
        className,
      )}
    />
  );
}
