import { Pencil, Trash2, X } from 'lucide-react';
import { useState } from 'react';
import { useDeleteStateItem, useStateValue } from '../../api/state.ts';
import { formatBytes } from '../../lib/format.ts';
import { Badge } from '../ui/badge.tsx';
import { Button, IconButton } from '../ui/button.tsx';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { KIND_TONE, valueBytes, valueKind } from './value-format.ts';

/** The detail sidebar: the item's full JSON (read fresh with `state::get`), Edit and a confirmed Delete. */
export function ItemDetail({
  scope,
  itemKey,
  onClose,
  onEdit,
  onDeleted,
}: {
  scope: string;
  itemKey: string;
  onClose: () => void;
  onEdit: (value: unknown) => void;
  onDeleted: () => void;
}) {
  const value = useStateValue(scope, itemKey);
  const remove = useDeleteStateItem();
  const [confirming, setConfirming] = useState(false);
  const current = value.data?.value;
  const kind = valueKind(current);

  return (
    <aside
      aria-label="Item detail"
      data-testid="state-detail"
      className="flex min-h-0 flex-col border-l border-line bg-surface xl:flex-1 max-xl:absolute max-xl:inset-y-0 max-xl:right-0 max-xl:z-20 max-xl:w-[min(420px,100%)] max-xl:shadow-pop"
    >
      <div className="flex items-start gap-2 border-b border-line px-4 py-3">
        <div className="min-w-0 flex-1">
          <p className="font-mono text-[11.5px] text-faint">{scope}</p>
          <div className="mt-0.5 flex items-center gap-1">
            <h2 className="font-mono text-[14px] font-semibold break-all text-fg" data-testid="state-detail-key">
              {itemKey}
            </h2>
            <CopyButton text={itemKey} label="Copy key" />
          </div>
        </div>
        <IconButton icon={X} label="Close detail" onClick={onClose} />
      </div>
      <div className="flex items-center gap-2 border-b border-line px-4 py-2">
        {value.data?.exists ? (
          <>
            <Badge tone={KIND_TONE[kind]}>{kind}</Badge>
            <span className="text-[12px] text-faint">{formatBytes(valueBytes(current))}</span>
          </>
        ) : null}
        <div className="ml-auto flex gap-1.5">
          <Button size="sm" icon={Pencil} disabled={!value.data?.exists} onClick={() => onEdit(current)}>
            Edit
          </Button>
          <Button
            size="sm"
            icon={Trash2}
            variant="ghost"
            className="text-bad hover:text-bad"
            disabled={!value.data?.exists}
            onClick={() => {
              remove.reset();
              setConfirming(true);
            }}
          >
            Delete
          </Button>
        </div>
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto p-4">
        {value.isPending ? (
          <div className="flex items-center gap-2 text-[13px] text-muted">
            <Spinner /> Reading the value…
          </div>
        ) : value.error ? (
          <ErrorNote title="Could not read the value" error={value.error} />
        ) : value.data?.exists ? (
          <JsonView value={current} maxHeight={10_000} label="value" />
        ) : (
          <EmptyState title={`No key “${itemKey}” in ${scope}`} compact>
            It may have been deleted since the link was made or the list was loaded.
          </EmptyState>
        )}
      </div>
      <ConfirmDialog
        open={confirming}
        title="Delete this item?"
        confirmLabel="Delete"
        busy={remove.isPending}
        error={remove.error}
        onClose={() => setConfirming(false)}
        onConfirm={() =>
          remove.mutate(
            { scope, key: itemKey },
            {
              onSuccess: () => {
                setConfirming(false);
                onDeleted();
              },
            },
          )
        }
      >
        <p>
          <b className="font-mono text-fg">{itemKey}</b> will be removed from <b className="font-mono text-fg">{scope}</b> with{' '}
          <code>state::delete</code>. Triggers bound to this scope receive <code>state:deleted</code>. This cannot be undone.
        </p>
      </ConfirmDialog>
    </aside>
  );
}
