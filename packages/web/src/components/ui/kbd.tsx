import { keyLabel } from '../../lib/keyboard.ts';

export function Kbd({ keys, className = '' }: { keys: string; className?: string }) {
  return (
    <span className={`inline-flex items-center gap-1 ${className}`}>
      {keys.split(' ').map((k) => (
        <kbd
          key={k}
          className="inline-flex h-5 min-w-5 items-center justify-center rounded border border-line-strong bg-surface-2 px-1 font-sans text-[11px] font-medium text-muted"
        >
          {keyLabel(k)}
        </kbd>
      ))}
    </span>
  );
}
