import type { LucideIcon } from 'lucide-react';
import { type ButtonHTMLAttributes, forwardRef } from 'react';
import { cn } from './cn.ts';
import { Spinner } from './spinner.tsx';

type Variant = 'primary' | 'secondary' | 'ghost' | 'danger' | 'subtle';
type Size = 'xs' | 'sm' | 'md';

const variants: Record<Variant, string> = {
  primary: 'bg-accent text-accent-fg hover:bg-accent-hover border border-transparent shadow-card',
  secondary: 'bg-surface text-fg border border-line-strong hover:bg-surface-2 shadow-card',
  subtle: 'bg-surface-2 text-fg border border-transparent hover:bg-surface-3',
  ghost: 'bg-transparent text-muted border border-transparent hover:bg-surface-2 hover:text-fg',
  danger: 'bg-bad text-white border border-transparent hover:opacity-90 shadow-card',
};
const sizes: Record<Size, string> = {
  xs: 'h-6 px-2 text-xs gap-1 rounded-md',
  sm: 'h-7 px-2.5 text-[13px] gap-1.5 rounded-md',
  md: 'h-8.5 px-3.5 text-sm gap-2 rounded-lg',
};

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: Variant;
  size?: Size;
  icon?: LucideIcon;
  loading?: boolean;
}

export const Button = forwardRef<HTMLButtonElement, ButtonProps>(function Button(
  { variant = 'secondary', size = 'md', icon: Icon, loading, className, children, disabled, type = 'button', ...rest },
  ref,
) {
  return (
    <button
      ref={ref}
      type={type}
      disabled={disabled || loading}
      className={cn(
        'inline-flex shrink-0 cursor-pointer items-center justify-center font-medium whitespace-nowrap transition-colors select-none disabled:cursor-not-allowed disabled:opacity-50',
        variants[variant],
        sizes[size],
        className,
      )}
      {...rest}
    >
      {loading ? <Spinner size={size === 'md' ? 15 : 13} /> : Icon ? <Icon size={size === 'md' ? 15 : 13} strokeWidth={2} /> : null}
      {children}
    </button>
  );
});

export function IconButton({ icon: Icon, label, className, size = 'sm', ...rest }: ButtonProps & { icon: LucideIcon; label: string }) {
  return (
    <Button
      variant="ghost"
      size={size}
      aria-label={label}
      title={label}
      className={cn(size === 'xs' ? 'w-6 px-0!' : size === 'sm' ? 'w-7 px-0!' : 'w-8.5 px-0!', className)}
      {...rest}
    >
      <Icon size={size === 'md' ? 16 : 14} />
    </Button>
  );
}
