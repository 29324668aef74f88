import { Link } from '@tanstack/react-router';
import { type FunctionRecord, isSystemFunction, useFunctionDetail } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import { summarise } from '../../lib/trigger-config.ts';
import { triggerTone } from '../../lib/trigger-kind.ts';
import type { FunctionTab } from '../../routes/functions.tsx';
import { Badge } from '../ui/badge.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { DetailPanel, PanelSection } from '../ui/detail-panel.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { SectionTabs } from '../ui/tabs.tsx';
import type { WorkerSummary } from './function-rows.ts';
import { InvokePanel, setInvokeDraft } from './invoke-panel.tsx';
import { RunHistory } from './run-history.tsx';
import { SchemaTable } from './schema-table.tsx';

/** Detail of one function: description, schemas, metadata, its triggers, Invoke (seed 2.2, 4.1) and its runs (issue 19 §13). */
export function FunctionDetail({
  fn,
  triggers,
  worker,
  tab,
  onTab,
  onClose,
}: {
  fn: FunctionRecord;
  triggers: TriggerRecord[];
  worker: WorkerSummary;
  tab: FunctionTab;
  onTab: (tab: FunctionTab) => void;
  onClose: () => void;
}) {
  const detail = useFunctionDetail(fn.function_id);
  const requestSchema = detail.data?.request_schema ?? detail.data?.request_format ?? fn.request_format;
  const responseSchema = detail.data?.response_schema ?? detail.data?.response_format ?? fn.response_format;
  const metadata = detail.data?.metadata ?? fn.metadata;
  return (
    <DetailPanel
      testId="function-detail"
      onClose={onClose}
      title={
        <>
          <h2 className="truncate font-mono text-[14px] font-semibold text-fg">{fn.function_id}</h2>
          <CopyButton text={fn.function_id} label="Copy function id" />
        </>
      }
      subtitle={
        <div className="space-y-1.5">
          <p>{fn.description || <span className="text-faint italic">No description</span>}</p>
          <div className="flex flex-wrap items-center gap-1.5">
            <Badge tone={isSystemFunction(fn) ? 'neutral' : 'accent'}>
              {fn.kind === 'internal' ? 'built-in' : fn.kind === 'http' ? 'HTTP function' : 'worker function'}
            </Badge>
            {fn.kind === 'http' ? null : <Badge>worker: {worker.name}</Badge>}
            {worker.status === 'busy' ? <Badge tone="warn">busy</Badge> : null}
          </div>
          {fn.kind === 'http' && fn.invocation ? (
            <div data-testid="http-endpoint" className="flex min-w-0 items-center gap-1.5">
              <Badge tone="accent" mono>
                {fn.invocation.method}
              </Badge>
              <span className="min-w-0 truncate font-mono text-[12px] text-fg" title={fn.invocation.url}>
                {fn.invocation.url}
              </span>
              {fn.invocation.timeout_ms ? (
                <span className="shrink-0 text-[11.5px] text-faint">timeout {fn.invocation.timeout_ms} ms</span>
              ) : null}
            </div>
          ) : null}
        </div>
      }
    >
      <SectionTabs
        label="Function details"
        value={tab}
        onChange={onTab}
        items={[
          { value: 'invoke', label: 'Invoke' },
          { value: 'runs', label: 'Runs' },
          { value: 'schema', label: 'Schema' },
          { value: 'triggers', label: 'Triggers', count: triggers.length },
          { value: 'metadata', label: 'Metadata' },
        ]}
      />
      {detail.isError ? <ErrorNote className="m-4" title="Could not load the function's details" error={detail.error} /> : null}
      {tab === 'invoke' ? (
        <div className="px-4 py-4">
          <InvokePanel key={fn.function_id} functionId={fn.function_id} schema={requestSchema} schemaLoaded={!detail.isPending} />
        </div>
      ) : null}
      {tab === 'runs' ? (
        <RunHistory
          functionId={fn.function_id}
          onEditInInvoke={(text) => {
            setInvokeDraft(fn.function_id, text);
            onTab('invoke');
          }}
        />
      ) : null}
      {tab === 'schema' ? (
        <>
          <PanelSection title="Request schema">
            <SchemaTable schema={requestSchema} emptyText="This function declares no request schema: any JSON is passed through." />
          </PanelSection>
          <PanelSection title="Response schema">
            <SchemaTable schema={responseSchema} emptyText="This function declares no response schema." />
          </PanelSection>
        </>
      ) : null}
      {tab === 'triggers' ? (
        <PanelSection title="Bound triggers">
          {triggers.length === 0 ? (
            <p className="text-[13px] text-muted">
              No trigger calls this function; it runs only when invoked directly (Invoke, SDK or MCP).
            </p>
          ) : (
            <ul className="divide-y divide-line rounded-lg border border-line">
              {triggers.map((t) => (
                <li key={t.id}>
                  <Link to="/triggers" search={{ id: t.id }} className="flex items-center gap-2 px-3 py-2 text-[12.5px] hover:bg-surface-2">
                    <Badge tone={triggerTone(t.trigger_type)} mono>
                      {t.trigger_type}
                    </Badge>
                    <span className="min-w-0 flex-1 truncate font-mono">{summarise(t.trigger_type, t.config, t.config_summary)}</span>
                    <Badge tone={t.status === 'active' ? 'ok' : t.status === 'error' ? 'bad' : 'neutral'}>{t.status}</Badge>
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </PanelSection>
      ) : null}
      {tab === 'metadata' ? (
        <PanelSection title="Metadata">
          {metadata && Object.keys(metadata).length ? (
            <JsonView value={metadata} label="metadata" />
          ) : (
            <p className="text-[13px] text-muted">No metadata registered with this function.</p>
          )}
        </PanelSection>
      ) : null}
    </DetailPanel>
  );
}
