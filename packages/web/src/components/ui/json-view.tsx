import { type ReactNode, useMemo, useState } from 'react';
import { cn } from './cn.ts';
import { CopyButton } from './copy-button.tsx';

const LIMIT = 200_000;

/** Pretty, colourised JSON with a copy button. Very large values are cut until asked for. */
export function JsonView({
  value,
  className,
  maxHeight = 420,
  label,
}: {
  value: unknown;
  className?: string;
  maxHeight?: number;
  label?: string;
}) {
  const text = useMemo(() => stringify(value), [value]);
  const [full, setFull] = useState(false);
  const shown = full || text.length <= LIMIT ? text : text.slice(0, LIMIT);
  return (
    <div className={cn('group relative rounded-lg border border-line bg-surface-2', className)}>
      <div className="absolute top-1.5 right-1.5 opacity-70 transition-opacity group-hover:opacity-100">
        <CopyButton text={text} label={label ? `Copy ${label}` : 'Copy JSON'} />
      </div>
      <pre
        className="overflow-auto p-3 pr-9 font-mono text-[12px] leading-[1.6] whitespace-pre-wrap break-words text-fg"
        style={{ maxHeight }}
      >
        {highlight(shown)}
        {shown.length < text.length ? (
          <button type="button" className="mt-2 block cursor-pointer text-accent hover:underline" onClick={() => setFull(true)}>
            … show all {Math.round(text.length / 1024)} KB
          </button>
        ) : null}
      </pre>
    </div>
  );
}

export function stringify(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

function highlight(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let i = 0;
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    if (m[1]) {
      out.push(
        <span key={i++} className={m[2] ? 'text-accent' : 'text-ok'}>
          {m[1]}
        </span>,
      );
      if (m[2]) out.push(m[2]);
    } else if (m[3]) {
      out.push(
        <span key={i++} className="text-violet">
          {m[3]}
        </span>,
      );
    } else if (m[4]) {
      out.push(
        <span key={i++} className="text-warn">
          {m[4]}
        </span>,
      );
    }
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
