import { lazy, type ReactNode, Suspense } from 'react';

/** The rich chunk (Markdown, highlighted code and JSON) loads on first use; plain text stands in meanwhile. */
const rich = () => import('./rich.tsx');
const MarkdownImpl = lazy(() => rich().then((m) => ({ default: m.Markdown })));
const JsonImpl = lazy(() => rich().then((m) => ({ default: m.JsonBlock })));

/** Start loading the chunk early (the chat page does on mount). */
export function preloadRich(): void {
  void rich();
}

export function Markdown({ text, streaming }: { text: string; streaming?: boolean }) {
  return (
    <Suspense fallback={<div className="text-[14px] leading-relaxed whitespace-pre-wrap">{text}</div>}>
      <MarkdownImpl text={text} streaming={streaming} />
    </Suspense>
  );
}

export function Json({ value, label }: { value: unknown; label?: ReactNode }) {
  const fallback = (
    <pre className="overflow-x-auto rounded-lg border border-line bg-surface-2 p-2.5 font-mono text-[12.5px]">
      {typeof value === 'string' ? value : JSON.stringify(value, null, 2)}
    </pre>
  );
  return (
    <Suspense fallback={fallback}>
      <JsonImpl value={value} label={label} />
    </Suspense>
  );
}
