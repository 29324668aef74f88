import { ChevronLeft, ChevronRight, PartyPopper, RotateCcw } from 'lucide-react';
import { useEffect, useState } from 'react';
import { DLQ_PAGE_SIZES, useDeadLetters, useRedriveAll } from '../../api/queues.ts';
import { countOf, formatCount } from '../../lib/format.ts';
import { Button, IconButton } from '../ui/button.tsx';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Select } from '../ui/inputs.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { DeadLetterRow } from './dead-letter-row.tsx';

/** Dead letters of one name, paged with the engine's total (the reference stopped at the first 50). */
export function DeadLetters({
  name,
  page,
  size,
  onPage,
  onSize,
}: {
  name: string;
  page: number;
  size: number;
  onPage: (page: number) => void;
  onSize: (size: number) => void;
}) {
  const offset = (page - 1) * size;
  const dlq = useDeadLetters(name, offset, size);
  const redriveAll = useRedriveAll();
  const [confirming, setConfirming] = useState(false);
  const total = dlq.data?.total;
  const pages = total === undefined ? 1 : Math.max(1, Math.ceil(total / size));

  // messages left (redriven, discarded): step back when the page ran out
  useEffect(() => {
    if (total !== undefined && page > pages) onPage(pages);
  }, [total, page, pages, onPage]);

  const messages = dlq.data?.messages ?? [];
  return (
    <div className="@container flex min-h-0 flex-1 flex-col">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2 border-b border-line px-4 py-2.5">
        <span className="text-[13px] text-muted" data-testid="dlq-total" data-total={total ?? ''}>
          {total === undefined ? 'Loading…' : countOf(total, 'dead letter')}
        </span>
        {redriveAll.data && !redriveAll.isPending ? (
          <span className="text-[12.5px] text-ok" role="status">
            Redriven {redriveAll.data.redriven}
          </span>
        ) : null}
        <div className="ml-auto flex flex-wrap items-center justify-end gap-2">
          <span className="text-[12px] whitespace-nowrap text-faint tabular-nums" data-testid="dlq-range">
            {total ? `${formatCount(offset + 1)}–${formatCount(Math.min(offset + size, total))} of ${formatCount(total)}` : ''}
          </span>
          <IconButton icon={ChevronLeft} label="Previous page" disabled={page <= 1} onClick={() => onPage(page - 1)} />
          <span className="text-[12px] whitespace-nowrap text-muted tabular-nums">
            {page} / {pages}
          </span>
          <IconButton icon={ChevronRight} label="Next page" disabled={page >= pages} onClick={() => onPage(page + 1)} />
          <Select aria-label="Page size" value={size} onChange={(e) => onSize(Number(e.target.value))} className="h-7! w-32 text-[12.5px]">
            {DLQ_PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n} / page
              </option>
            ))}
          </Select>
          <Button
            size="sm"
            variant="secondary"
            icon={RotateCcw}
            disabled={!total}
            onClick={() => {
              redriveAll.reset();
              setConfirming(true);
            }}
            data-testid="dlq-redrive-all"
          >
            Redrive all
          </Button>
        </div>
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto">
        {dlq.error ? <ErrorNote title="Could not read the dead letters" error={dlq.error} className="m-4" /> : null}
        {dlq.isPending ? (
          <div className="flex items-center gap-2 px-4 py-6 text-[13px] text-muted">
            <Spinner /> Loading dead letters…
          </div>
        ) : null}
        {total === 0 ? (
          <EmptyState icon={PartyPopper} title="No dead letters" compact>
            Messages land here after they fail every retry. Redriven messages go back to the end of their queue.
          </EmptyState>
        ) : null}
        <ul>
          {messages.map((m) => (
            <DeadLetterRow key={m.id} message={m} name={name} />
          ))}
        </ul>
      </div>
      <ConfirmDialog
        open={confirming}
        title={total === 1 ? 'Redrive the dead letter?' : `Redrive all ${countOf(total ?? 0, 'dead letter')}?`}
        confirmLabel={`Redrive ${formatCount(total ?? 0)}`}
        danger={false}
        busy={redriveAll.isPending}
        error={redriveAll.error}
        onClose={() => setConfirming(false)}
        onConfirm={() => redriveAll.mutate(name, { onSuccess: () => setConfirming(false) })}
      >
        <p>
          Every dead letter of <b className="font-mono text-fg">{name}</b> goes back to the end of its queue with a fresh retry budget (
          <code>eng::queue::redrive</code>). Those that fail again return here.
        </p>
      </ConfirmDialog>
    </div>
  );
}
