import { Search, X } from 'lucide-react';
import { forwardRef, type InputHTMLAttributes, type RefObject, type SelectHTMLAttributes, useLayoutEffect, useRef, useState } from 'react';
import { cn } from './cn.ts';

/** Width utilities in `className` replace the default full width (no class merging library). */
const withWidth = (className?: string) => (className && /(^|\s)(w-|flex-1)/.test(className) ? className : cn('w-full', className));

const field =
  'h-8 rounded-lg border border-line-strong bg-surface px-2.5 text-[13px] text-fg placeholder:text-faint outline-none transition-colors focus:border-accent focus:ring-2 focus:ring-accent/20';

export const TextInput = forwardRef<HTMLInputElement, InputHTMLAttributes<HTMLInputElement>>(function TextInput(
  { className, ...rest },
  ref,
) {
  return <input ref={ref} className={cn(field, withWidth(className))} {...rest} />;
});

export function Select({ className, children, ...rest }: SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select className={cn(field, 'cursor-pointer pr-7', withWidth(className))} {...rest}>
      {children}
    </select>
  );
}

/** The page search box; `/` focuses it (data-search marks it for the shortcut). */
export function SearchInput({
  value,
  onChange,
  placeholder = 'Search…',
  shortPlaceholder,
  className,
}: {
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  /** Shown instead of `placeholder` when the box is too narrow for it (default: its first word and "…"). */
  shortPlaceholder?: string;
  className?: string;
}) {
  const input = useRef<HTMLInputElement>(null);
  const shown = useFittingPlaceholder(input, placeholder, shortPlaceholder);
  return (
    <div className={cn('relative', className)}>
      <Search size={14} className="pointer-events-none absolute top-1/2 left-2.5 -translate-y-1/2 text-faint" />
      <input
        ref={input}
        data-search
        type="search"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && value) {
            e.stopPropagation();
            onChange('');
          }
        }}
        // the attribute stays the full text (accessible name, getByPlaceholder); a box too narrow
        // for it shows the short form drawn over the field instead of a cut native placeholder
        placeholder={placeholder}
        aria-label={placeholder}
        title={shown !== placeholder ? placeholder : undefined}
        className={cn(
          field,
          'w-full pr-7 pl-8 [&::-webkit-search-cancel-button]:hidden',
          shown !== placeholder && 'placeholder:text-transparent',
        )}
      />
      {shown !== placeholder && !value ? (
        <span
          aria-hidden="true"
          data-placeholder-fit
          className="pointer-events-none absolute inset-y-0 right-7 left-8 flex items-center overflow-hidden text-[13px] whitespace-nowrap text-faint"
        >
          {shown}
        </span>
      ) : null}
      {value ? (
        <button
          type="button"
          aria-label="Clear search"
          onClick={() => onChange('')}
          className="absolute top-1/2 right-1.5 flex size-5 -translate-y-1/2 cursor-pointer items-center justify-center rounded text-faint hover:bg-surface-2 hover:text-fg"
        >
          <X size={12} />
        </button>
      ) : null}
    </div>
  );
}

export function Toggle({
  checked,
  onChange,
  label,
  title,
}: {
  checked: boolean;
  onChange: (value: boolean) => void;
  label: string;
  title?: string;
}) {
  return (
    <label className="inline-flex cursor-pointer items-center gap-2 text-[13px] text-muted select-none hover:text-fg" title={title}>
      <button
        type="button"
        role="switch"
        aria-checked={checked}
        aria-label={label}
        onClick={() => onChange(!checked)}
        className={cn(
          'relative inline-flex h-4.5 w-8 shrink-0 cursor-pointer items-center rounded-full border transition-colors',
          checked ? 'border-accent bg-accent' : 'border-line-strong bg-surface-3',
        )}
      >
        <span
          className={cn(
            'inline-block size-3.5 rounded-full bg-white shadow transition-transform',
            checked ? 'translate-x-[15px]' : 'translate-x-[1px]',
          )}
        />
      </button>
      {label}
    </label>
  );
}

let measureCtx: CanvasRenderingContext2D | null | undefined;

/** Width of `text` in the input's font, in CSS px. */
function textWidth(el: HTMLElement, text: string): number {
  if (measureCtx === undefined) measureCtx = document.createElement('canvas').getContext('2d');
  if (!measureCtx) return 0;
  const cs = getComputedStyle(el);
  measureCtx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  return measureCtx.measureText(text).width;
}

/**
 * A placeholder is never shown cut off (issue 25 item 15): when the box is narrower than the full
 * text (a phone, a toolbar that wraps), the short form is shown, then the first word and "…", then
 * nothing; the full text stays the placeholder attribute, the accessible name and the tooltip.
 * Re-measured when the box resizes and when the web font arrives.
 */
function useFittingPlaceholder(ref: RefObject<HTMLInputElement | null>, full: string, short?: string): string {
  const [shown, setShown] = useState(full);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const firstWord = full.split(/\s+/)[0]?.replace(/[…,.:]+$/, '') ?? '';
    const candidates = [full, short, firstWord && firstWord !== full ? `${firstWord}…` : undefined, ''].filter(
      (c): c is string => c !== undefined,
    );
    const fit = () => {
      const cs = getComputedStyle(el);
      const room = el.clientWidth - Number.parseFloat(cs.paddingLeft) - Number.parseFloat(cs.paddingRight);
      // not laid out (hidden): keep the full text
      if (room <= 0) return setShown(full);
      setShown(candidates.find((c) => textWidth(el, c) <= room) ?? '');
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(el);
    let live = true;
    void document.fonts?.ready.then(() => {
      if (live) fit();
    });
    return () => {
      live = false;
      observer.disconnect();
    };
  }, [ref, full, short]);
  return shown;
}
