import { type InputHTMLAttributes, useEffect, useRef, useState } from 'react';
import { SearchInput, TextInput } from '../ui/inputs.tsx';

/** How long typing settles before a text filter reaches the URL and the engine (console-worker §3.2). */
export const TEXT_DEBOUNCE_MS = 300;

/**
 * Local text that commits after a pause; follows the URL when it changes from elsewhere (a
 * removed filter pill, back/forward).
 */
function useDebouncedText(value: string | undefined, onCommit: (v: string | undefined) => void) {
  const [text, setText] = useState(value ?? '');
  const committed = useRef(value ?? '');
  const commit = useRef(onCommit);
  commit.current = onCommit;
  useEffect(() => {
    if ((value ?? '') !== committed.current) {
      committed.current = value ?? '';
      setText(value ?? '');
    }
  }, [value]);
  useEffect(() => {
    if (text === committed.current) return;
    const timer = window.setTimeout(() => {
      committed.current = text;
      commit.current(text.trim() === '' ? undefined : text.trim());
    }, TEXT_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [text]);
  return [text, setText] as const;
}

export function DebouncedSearch({
  value,
  onCommit,
  placeholder,
  className,
}: {
  value: string | undefined;
  onCommit: (v: string | undefined) => void;
  placeholder: string;
  className?: string;
}) {
  const [text, setText] = useDebouncedText(value, onCommit);
  return <SearchInput value={text} onChange={setText} placeholder={placeholder} className={className} />;
}

export function DebouncedInput({
  value,
  onCommit,
  ...rest
}: { value: string | undefined; onCommit: (v: string | undefined) => void } & Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'value' | 'onChange'
>) {
  const [text, setText] = useDebouncedText(value, onCommit);
  return <TextInput value={text} onChange={(e) => setText(e.target.value)} {...rest} />;
}
