import { ChevronRight, History, RotateCcw, Trash2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import { type DeadLetter, errorSummary, useDiscardMessage, useRedriveMessage } from '../../api/queues.ts';
import { formatBytes, formatDateTime, timeAgo } from '../../lib/format.ts';
import { parsePayload, rerunText } from '../../lib/runs.ts';
import { RerunDialog } from '../functions/rerun-dialog.tsx';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { DefinitionList } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';

/** One dead letter: summary row, and when opened its last error, payload and ids; Redrive and a two-step Discard. */
export function DeadLetterRow({ message, name }: { message: DeadLetter; name: string }) {
  const [open, setOpen] = useState(false);
  const [armed, setArmed] = useState(false);
  const [rerunning, setRerunning] = useState(false);
  const redrive = useRedriveMessage();
  const discard = useDiscardMessage();
  const busy = redrive.isPending || discard.isPending;

  // the Discard confirmation disarms by itself so a later stray click cannot delete
  useEffect(() => {
    if (!armed) return;
    const timer = setTimeout(() => setArmed(false), 4000);
    return () => clearTimeout(timer);
  }, [armed]);

  const ids = { queue: name, message_id: message.id };
  return (
    <li className={cn('border-b border-line/60', open && 'bg-surface-2/60')} data-testid="dead-letter" data-id={message.id}>
      {/* the actions wrap under the summary when the pane is narrow (a 1,024 px window with the list beside it) */}
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1.5 px-4 py-2">
        <button
          type="button"
          aria-expanded={open}
          aria-label={open ? 'Hide details' : 'Show details'}
          onClick={() => setOpen(!open)}
          className="flex min-w-0 flex-[1_1_18rem] cursor-pointer items-center gap-3 text-left"
        >
          <ChevronRight size={14} className={cn('shrink-0 text-faint transition-transform', open && 'rotate-90')} />
          <span className="w-16 shrink-0 text-[12px] text-muted tabular-nums @lg:w-20" title={formatDateTime(message.failed_at)}>
            {timeAgo(message.failed_at)}
          </span>
          <span className="min-w-0 flex-1">
            <span className="block truncate text-[12.5px] text-bad" data-testid="dead-letter-error">
              {errorSummary(message.error)}
            </span>
            <span className="block truncate font-mono text-[11.5px] text-faint">
              {message.function_id} · {message.id}
            </span>
          </span>
          <Badge tone={message.retries > 2 ? 'warn' : 'neutral'} title="delivery attempts">
            {message.retries} {message.retries === 1 ? 'attempt' : 'attempts'}
          </Badge>
          <span className="w-16 shrink-0 text-right text-[11.5px] text-faint tabular-nums @max-lg:hidden">
            {formatBytes(message.size_bytes)}
          </span>
        </button>
        <div className="ml-auto flex shrink-0 items-center gap-1">
          <Button
            size="xs"
            icon={RotateCcw}
            disabled={busy}
            loading={redrive.isPending}
            onClick={() => redrive.mutate(ids)}
            data-testid="dead-letter-redrive"
          >
            Redrive
          </Button>
          <Button
            size="xs"
            variant="ghost"
            icon={History}
            disabled={busy}
            onClick={() => setRerunning(true)}
            title={`Call ${message.function_id} once now with this payload, outside the queue`}
            data-testid="dead-letter-rerun"
          >
            Rerun
          </Button>
          <Button
            size="xs"
            variant={armed ? 'danger' : 'ghost'}
            icon={Trash2}
            disabled={busy}
            loading={discard.isPending}
            className={armed ? undefined : 'text-bad hover:text-bad'}
            onClick={() => (armed ? discard.mutate(ids) : setArmed(true))}
            data-testid="dead-letter-discard"
          >
            {armed ? 'Confirm discard' : 'Discard'}
          </Button>
        </div>
      </div>
      <RerunDialog
        open={rerunning}
        onClose={() => setRerunning(false)}
        functionId={message.function_id}
        initialText={rerunText(parsePayload(JSON.stringify(message.payload ?? null)))}
        context={
          <>
            The payload of dead letter <code className="font-mono">{message.id}</code> of <code className="font-mono">{name}</code>, failed{' '}
            {formatDateTime(message.failed_at)}. A rerun calls the function once, now, outside the queue: the dead letter stays until you
            redrive or discard it.
          </>
        }
      />
      {redrive.error || discard.error ? (
        <ErrorNote className="mx-4 mb-2" title="The action failed" error={redrive.error ?? discard.error} />
      ) : null}
      {open ? (
        <div className="space-y-3 px-4 pb-4 @lg:pl-11" data-testid="dead-letter-detail">
          <div>
            <p className="mb-1 text-[11px] font-semibold tracking-wider text-faint uppercase">Last error</p>
            <pre className="max-h-56 overflow-auto rounded-lg border border-bad/30 bg-bad-soft px-3 py-2 font-mono text-[12px] whitespace-pre-wrap text-bad">
              {message.error || '(no error recorded)'}
            </pre>
          </div>
          <DefinitionList
            items={[
              [
                'Message id',
                <span key="id" className="inline-flex items-center gap-1 font-mono text-[12px]">
                  {message.id} <CopyButton text={message.id} label="Copy message id" />
                </span>,
              ],
              ['Function', <code key="fn">{message.function_id}</code>],
              ['Enqueued', formatDateTime(message.enqueued_at)],
              ['Failed', formatDateTime(message.failed_at)],
              ['Attempts', message.retries],
            ]}
          />
          <div>
            <p className="mb-1 text-[11px] font-semibold tracking-wider text-faint uppercase">Payload</p>
            <JsonView value={message.payload} maxHeight={320} label="payload" />
          </div>
        </div>
      ) : null}
    </li>
  );
}
