import { Braces } from 'lucide-react';
import { type KeyboardEvent, useMemo, useRef } from 'react';
import { cn } from './cn.ts';

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJson(text: string): JsonParse {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/**
 * A JSON text editor: line numbers, Tab indents, ⌘/Ctrl+Enter submits, live validation and a
 * Format action. Plain textarea on purpose: no editor framework in the initial bundle.
 */
export function JsonEditor({
  value,
  onChange,
  onSubmit,
  label,
  minRows = 6,
  maxRows = 18,
  className,
  id,
}: {
  value: string;
  onChange: (text: string) => void;
  onSubmit?: () => void;
  label: string;
  minRows?: number;
  maxRows?: number;
  className?: string;
  id?: string;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const parsed = useMemo(() => parseJson(value), [value]);
  const lines = Math.max(1, value.split('\n').length);
  const rows = Math.min(maxRows, Math.max(minRows, lines));

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if ((e.metaKey || e.ctrlKey) && e.key === 'Enter') {
      e.preventDefault();
      onSubmit?.();
      return;
    }
    if (e.key === 'Tab' && !e.shiftKey) {
      e.preventDefault();
      const el = e.currentTarget;
      const { selectionStart: s, selectionEnd: end } = el;
      const next = `${value.slice(0, s)}  ${value.slice(end)}`;
      onChange(next);
      requestAnimationFrame(() => el.setSelectionRange(s + 2, s + 2));
    }
  };

  return (
    <div
      className={cn(
        'overflow-hidden rounded-lg border bg-surface-2 focus-within:ring-2',
        parsed.ok ? 'border-line-strong focus-within:border-accent focus-within:ring-accent/20' : 'border-bad/60 focus-within:ring-bad/20',
        className,
      )}
    >
      <div className="flex">
        <div
          ref={gutter}
          aria-hidden="true"
          className="overflow-hidden border-r border-line bg-surface py-2 text-right font-mono text-[11.5px] leading-[1.6] text-faint select-none"
          style={{ height: `calc(${rows} * 1.6 * 12.5px + 16px)` }}
        >
          {Array.from({ length: lines }, (_, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: line numbers
            <div key={i} className="px-2">
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          ref={area}
          aria-label={label}
          aria-invalid={!parsed.ok}
          spellCheck={false}
          autoCapitalize="off"
          autoCorrect="off"
          value={value}
          rows={rows}
          onChange={(e) => onChange(e.target.value)}
          onKeyDown={onKeyDown}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          className="block w-full resize-none bg-transparent px-3 py-2 font-mono text-[12.5px] leading-[1.6] text-fg outline-none"
          style={{ height: `calc(${rows} * 1.6 * 12.5px + 16px)` }}
        />
      </div>
      <div className="flex items-center justify-between gap-2 border-t border-line bg-surface px-2.5 py-1 text-[11.5px]">
        <span className={parsed.ok ? 'text-faint' : 'truncate text-bad'} role={parsed.ok ? undefined : 'alert'}>
          {parsed.ok ? 'Valid JSON · ⌘/Ctrl+Enter to run' : `Invalid JSON: ${parsed.error}`}
        </span>
        <button
          type="button"
          disabled={!parsed.ok || parsed.value === undefined}
          onClick={() => parsed.ok && onChange(JSON.stringify(parsed.value, null, 2))}
          className="inline-flex cursor-pointer items-center gap-1 rounded px-1.5 py-0.5 text-muted hover:bg-surface-2 hover:text-fg disabled:cursor-default disabled:opacity-40"
        >
          <Braces size={12} /> Format
        </button>
      </div>
    </div>
  );
}
