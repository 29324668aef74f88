import type { ReactNode } from 'react';
import { cn } from './cn.ts';

export type Tone = 'neutral' | 'accent' | 'ok' | 'warn' | 'bad' | 'info' | 'violet';

const tones: Record<Tone, string> = {
  neutral: 'bg-surface-2 text-muted border-line',
  accent: 'bg-accent-soft text-accent border-transparent',
  ok: 'bg-ok-soft text-ok border-transparent',
  warn: 'bg-warn-soft text-warn border-transparent',
  bad: 'bg-bad-soft text-bad border-transparent',
  info: 'bg-info-soft text-info border-transparent',
  violet: 'bg-violet-soft text-violet border-transparent',
};

export function Badge({
  tone = 'neutral',
  children,
  className,
  mono,
  title,
}: {
  tone?: Tone;
  children: ReactNode;
  className?: string;
  mono?: boolean;
  title?: string;
}) {
  return (
    <span
      title={title}
      className={cn(
        'inline-flex h-5 shrink-0 items-center gap-1 rounded-md border px-1.5 text-[11px] leading-none font-medium whitespace-nowrap',
        mono && 'font-mono text-[10.5px]',
        tones[tone],
        className,
      )}
    >
      {children}
    </span>
  );
}

export function CountBadge({ value, active }: { value: number; active?: boolean }) {
  return (
    <span
      className={cn(
        'inline-flex h-4.5 min-w-4.5 items-center justify-center rounded-full px-1.5 text-[10.5px] font-semibold tabular-nums',
        active ? 'bg-accent text-accent-fg' : 'bg-surface-3 text-muted',
      )}
    >
      {value}
    </span>
  );
}

export function StatusDot({ tone, pulse, className }: { tone: Tone; pulse?: boolean; className?: string }) {
  const color: Record<Tone, string> = {
    neutral: 'bg-faint',
    accent: 'bg-accent',
    ok: 'bg-ok',
    warn: 'bg-warn',
    bad: 'bg-bad',
    info: 'bg-info',
    violet: 'bg-violet',
  };
  return <span className={cn('inline-block size-2 shrink-0 rounded-full', color[tone], pulse && 'animate-pulse-dot', className)} />;
}
