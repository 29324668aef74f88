import { Link } from '@tanstack/react-router';
import { Activity, Play, RotateCcw } from 'lucide-react';
import { useEffect, useState } from 'react';
import { type InvokeOutcome, useInvokeFunction } from '../../api/functions.ts';
import { formatDuration, formatTime } from '../../lib/format.ts';
import { exampleFromSchema } from '../../lib/json-schema.ts';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';
import { JsonView } from '../ui/json-view.tsx';

/** Drafts and recent results survive switching between functions for this session. */
const drafts = new Map<string, string>();
const history = new Map<string, InvokeOutcome[]>();

/** Start the Invoke editor of `functionId` from this text (Edit & rerun of a recorded run). */
export function setInvokeDraft(functionId: string, text: string): void {
  drafts.set(functionId, text);
}

export function exampleText(schema: unknown): string {
  const example = schema ? exampleFromSchema(schema) : {};
  return JSON.stringify(example ?? {}, null, 2);
}

/**
 * Invoke (seed 4.1 op 1): a JSON editor prefilled from the request schema, the result or the
 * error inline, the measured duration, and a link to the call's trace when one was recorded.
 */
export function InvokePanel({ functionId, schema, schemaLoaded }: { functionId: string; schema: unknown; schemaLoaded: boolean }) {
  const [text, setText] = useState(() => drafts.get(functionId) ?? exampleText(schema));
  const [outcome, setOutcome] = useState<InvokeOutcome | undefined>(() => history.get(functionId)?.[0]);
  const invoke = useInvokeFunction();

  // the schema may arrive after the panel opened: fill it in unless the user has typed
  useEffect(() => {
    if (schemaLoaded && !drafts.has(functionId)) setText(exampleText(schema));
  }, [schemaLoaded, schema, functionId]);

  const parsed = parseJson(text);
  const run = () => {
    if (!parsed.ok || invoke.isPending) return;
    invoke.mutate(
      { functionId, input: parsed.value === undefined ? {} : parsed.value },
      {
        onSuccess: (result) => {
          // a late answer for a function the user has left must not show on the new one
          const list = [result, ...(history.get(functionId) ?? [])].slice(0, 5);
          history.set(functionId, list);
          setOutcome(result);
        },
      },
    );
  };

  const past = history.get(functionId) ?? [];
  return (
    <div className="space-y-3" data-testid="invoke-panel">
      <div className="flex items-center justify-between gap-2">
        <label htmlFor="invoke-input" className="text-[12.5px] font-medium text-fg">
          Input <span className="font-normal text-muted">(JSON payload)</span>
        </label>
        <Button
          size="xs"
          variant="ghost"
          icon={RotateCcw}
          onClick={() => {
            drafts.delete(functionId);
            setText(exampleText(schema));
          }}
        >
          Reset from schema
        </Button>
      </div>
      <JsonEditor
        id="invoke-input"
        label={`Input for ${functionId}`}
        value={text}
        onChange={(next) => {
          drafts.set(functionId, next);
          setText(next);
        }}
        onSubmit={run}
        minRows={5}
      />
      <div className="flex items-center gap-2">
        <Button variant="primary" icon={Play} onClick={run} loading={invoke.isPending} disabled={!parsed.ok}>
          Invoke
        </Button>
        {invoke.isPending ? <span className="text-[12.5px] text-muted">Waiting for {functionId}…</span> : null}
      </div>
      {outcome ? <InvokeResult outcome={outcome} /> : null}
      {past.length > 1 ? (
        <div className="text-[12px] text-muted">
          <p className="mb-1 font-medium">Earlier this session</p>
          <ul className="space-y-0.5">
            {past.slice(1).map((o) => (
              <li key={o.startedAt} className="flex items-center gap-2">
                <Badge tone={o.ok ? 'ok' : 'bad'}>{o.ok ? 'ok' : (o.error?.code ?? 'error')}</Badge>
                <span className="tabular-nums">{formatTime(o.startedAt)}</span>
                <span className="tabular-nums">{formatDuration(o.durationMs)}</span>
                {o.traceId ? (
                  <Link to="/traces" search={{ trace_id: o.traceId }} className="text-accent hover:underline">
                    trace
                  </Link>
                ) : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}

export function InvokeResult({ outcome }: { outcome: InvokeOutcome }) {
  return (
    <div className="space-y-2" data-testid="invoke-result" data-ok={outcome.ok}>
      <div className="flex flex-wrap items-center gap-2 text-[12.5px]">
        <Badge tone={outcome.ok ? 'ok' : 'bad'}>{outcome.ok ? 'Success' : 'Error'}</Badge>
        <span className="text-muted tabular-nums" data-testid="invoke-duration">
          {formatDuration(outcome.durationMs)}
        </span>
        <span className="text-faint">at {formatTime(outcome.startedAt, true)}</span>
        {outcome.traceId ? (
          <Link
            to="/traces"
            search={{ trace_id: outcome.traceId }}
            data-testid="invoke-trace-link"
            className="ml-auto inline-flex items-center gap-1 font-medium text-accent hover:underline"
          >
            <Activity size={13} /> View trace
          </Link>
        ) : null}
      </div>
      {outcome.ok ? (
        <JsonView value={outcome.result === undefined ? null : outcome.result} label="result" maxHeight={360} />
      ) : (
        <ErrorNote title="The function returned an error" error={outcome.error} />
      )}
    </div>
  );
}
