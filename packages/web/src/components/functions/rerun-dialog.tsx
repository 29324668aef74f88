import { Link } from '@tanstack/react-router';
import { History, Play } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { type InvokeOutcome, useInvokeFunction } from '../../api/functions.ts';
import { Button } from '../ui/button.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';
import { InvokeResult } from './invoke-panel.tsx';

/**
 * Rerun (issue 19 §13): call a function again with the input of an earlier run — a run of the
 * function page, a span of a trace, a dead letter's payload — as recorded, or edited first. The
 * call goes through the engine like Invoke (a new trace, linked from the result).
 */
export function RerunDialog({
  open,
  onClose,
  functionId,
  initialText,
  context,
  note,
}: {
  open: boolean;
  onClose: () => void;
  functionId: string;
  /** The JSON the editor starts with. */
  initialText: string;
  /** Where the input comes from, shown above the editor. */
  context?: ReactNode;
  /** A warning about the input (cut by the SDK, not recorded). */
  note?: ReactNode;
}) {
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={
        <span className="inline-flex items-center gap-1.5">
          <History size={14} className="text-accent" /> Rerun <code className="font-mono">{functionId}</code>
        </span>
      }
      labelledBy="rerun-title"
      className="max-w-2xl"
    >
      {/* remounted per opening: a fresh editor and no stale result */}
      {open ? <RerunBody functionId={functionId} initialText={initialText} context={context} note={note} onClose={onClose} /> : null}
    </Dialog>
  );
}

function RerunBody({
  functionId,
  initialText,
  context,
  note,
  onClose,
}: {
  functionId: string;
  initialText: string;
  context?: ReactNode;
  note?: ReactNode;
  onClose: () => void;
}) {
  const [text, setText] = useState(initialText);
  const [outcome, setOutcome] = useState<InvokeOutcome | undefined>(undefined);
  const invoke = useInvokeFunction();
  const parsed = parseJson(text);
  const edited = text !== initialText;
  const run = () => {
    if (!parsed.ok || invoke.isPending) return;
    invoke.mutate({ functionId, input: parsed.value === undefined ? {} : parsed.value }, { onSuccess: setOutcome });
  };
  return (
    <div className="space-y-3 px-4 py-3" data-testid="rerun-dialog" data-function-id={functionId}>
      {context ? <div className="text-[12.5px] text-muted">{context}</div> : null}
      {note ? (
        <p className="rounded-md border border-warn/40 bg-warn-soft px-2.5 py-1.5 text-[12.5px] text-fg" data-testid="rerun-note">
          {note}
        </p>
      ) : null}
      <JsonEditor
        id="rerun-input"
        label={`Input for ${functionId}`}
        value={text}
        onChange={setText}
        onSubmit={run}
        minRows={6}
        maxRows={16}
      />
      <div className="flex flex-wrap items-center gap-2">
        <Button variant="primary" icon={Play} onClick={run} loading={invoke.isPending} disabled={!parsed.ok} data-testid="rerun-run">
          {edited ? 'Run with this input' : 'Rerun with the same input'}
        </Button>
        {!parsed.ok ? <span className="text-[12.5px] text-bad">Not JSON: {parsed.error}</span> : null}
        <Link
          to="/functions"
          search={{ fn: functionId, tab: 'runs' }}
          onClick={onClose}
          className="ml-auto text-[12.5px] font-medium text-accent hover:underline"
        >
          All runs of {functionId}
        </Link>
      </div>
      {outcome ? <InvokeResult outcome={outcome} /> : null}
    </div>
  );
}
