import type { ReactNode } from 'react';
import { Button } from './button.tsx';
import { Dialog as DialogFrame } from './dialog.tsx';
import { ErrorNote } from './empty-state.tsx';

/**
 * "Are you sure?" for destructive actions (delete a state key, clear logs, redrive all): the
 * action runs only from the confirm button; Escape and the overlay cancel.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger = true,
  busy,
  error,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: ReactNode;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <DialogFrame open={open} onClose={onClose} title={title}>
      <div className="space-y-3 px-4 py-4 text-[13px] leading-relaxed text-muted">
        {children}
        {error ? <ErrorNote title="It did not work" error={error} /> : null}
      </div>
      <div className="flex justify-end gap-2 border-t border-line px-4 py-3">
        <Button size="sm" variant="ghost" onClick={onClose}>
          Cancel
        </Button>
        <Button size="sm" variant={danger ? 'danger' : 'primary'} loading={busy} onClick={onConfirm} data-testid="confirm-action">
          {confirmLabel}
        </Button>
      </div>
    </DialogFrame>
  );
}
