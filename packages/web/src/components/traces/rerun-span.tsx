import { RotateCcw } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { formatDateTime } from '../../lib/format.ts';
import { isExecution, type Payload, payloadOf, rerunText } from '../../lib/runs.ts';
import { RerunDialog } from '../functions/rerun-dialog.tsx';
import { Button } from '../ui/button.tsx';
import { functionIdOf, shortId } from './span-facts.ts';
import type { SpanNode, TraceModel } from './trace-model.ts';

/**
 * Rerun from a trace (issue 19 §13): the function a span ran, called again with the input the span
 * recorded (the worker's `execute` span carries it; an engine `call` span takes it from that child).
 */

/** Built-ins are not rerun from a trace: their calls are plumbing (state reads, log writes, …). */
const BUILTIN = /^(engine|eng|iii)::/;

export interface RerunTarget {
  functionId: string;
  node: SpanNode;
  input?: Payload;
}

export function rerunTargetOf(node: SpanNode): RerunTarget | undefined {
  const functionId = functionIdOf(node.span);
  if (!functionId || BUILTIN.test(functionId) || !isExecution(node.span)) return undefined;
  const inner = node.children.find((c) => functionIdOf(c.span) === functionId);
  return { functionId, node, input: payloadOf(node.span, 'input') ?? (inner ? payloadOf(inner.span, 'input') : undefined) };
}

/** What the trace ran first: the earliest span that executed a (non built-in) function. */
export function traceEntryOf(model: TraceModel): RerunTarget | undefined {
  for (const node of model.nodes) {
    const target = rerunTargetOf(node);
    if (target) return target;
  }
  return undefined;
}

export function RerunButton({ target, label = 'Rerun' }: { target: RerunTarget; label?: ReactNode }) {
  const [open, setOpen] = useState(false);
  const span = target.node.span;
  return (
    <>
      <Button
        size="sm"
        icon={RotateCcw}
        onClick={() => setOpen(true)}
        title={`Call ${target.functionId} again with this span's input`}
        data-testid="trace-rerun"
        data-function-id={target.functionId}
      >
        {label}
      </Button>
      <RerunDialog
        open={open}
        onClose={() => setOpen(false)}
        functionId={target.functionId}
        initialText={rerunText(target.input)}
        context={
          <>
            Input recorded by span <code className="font-mono">{shortId(span.span_id)}</code> ({span.name}) at{' '}
            {formatDateTime(target.node.startMs)}.
          </>
        }
        note={
          !target.input
            ? 'This span recorded no input (its worker sends no payloads with its spans): write the input to send.'
            : target.input.truncated
              ? 'The SDK cut this input when it recorded it: complete the JSON before running.'
              : undefined
        }
      />
    </>
  );
}
