import { Link } from '@tanstack/react-router';
import type { TriggerRecord } from '../../api/triggers.ts';
import { kindTone, type TriggerKind } from '../../lib/trigger-kind.ts';
import { Badge } from '../ui/badge.tsx';
import { DefinitionList } from '../ui/card.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { DetailPanel, PanelSection } from '../ui/detail-panel.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { CronPanel } from './cron-panel.tsx';
import { EmitPanel } from './emit-panel.tsx';
import { HttpTestPanel } from './http-test-panel.tsx';
import { isShadowed, TriggerStatus } from './trigger-list.tsx';

/** A trigger's details and the test tool for its kind (seed 4.1 ops 2–4). */
export function TriggerDetail({
  trigger,
  kind,
  summary,
  functionMissing,
  onClose,
}: {
  trigger: TriggerRecord;
  kind: TriggerKind;
  summary: string;
  functionMissing?: boolean;
  onClose: () => void;
}) {
  return (
    <DetailPanel
      testId="trigger-detail"
      onClose={onClose}
      title={
        <>
          <Badge tone={kindTone(kind)} mono>
            {trigger.trigger_type}
          </Badge>
          <h2 className="truncate font-mono text-[14px] font-semibold text-fg">{summary}</h2>
        </>
      }
      subtitle={
        <span>
          calls{' '}
          <Link to="/functions" search={{ fn: trigger.function_id }} className="font-mono text-accent hover:underline">
            {trigger.function_id}
          </Link>
        </span>
      }
    >
      {trigger.status === 'error' && trigger.error ? (
        <div role="alert" className="mx-4 mt-4 rounded-lg border border-bad/30 bg-bad-soft px-3 py-2 text-[13px] text-bad">
          <p className="font-medium">The trigger type's provider refused this binding</p>
          <p className="mt-0.5 font-mono text-xs">{trigger.error}</p>
        </div>
      ) : null}
      {functionMissing ? (
        <div role="alert" className="mx-4 mt-4 rounded-lg border border-warn/30 bg-warn-soft px-3 py-2 text-[13px] text-warn">
          <p className="font-medium">The function this trigger calls is not registered</p>
          <p className="mt-0.5">
            No connected worker registers <span className="font-mono">{trigger.function_id}</span>, so every firing fails with{' '}
            <span className="font-mono">function_not_found</span> until a worker registers it again.
          </p>
        </div>
      ) : null}
      {trigger.status === 'inactive' ? (
        <div role="status" className="mx-4 mt-4 rounded-lg border border-line bg-surface-2 px-3 py-2 text-[13px] text-muted">
          <p className="font-medium text-fg">
            {isShadowed(trigger) ? 'Shadowed: another binding serves this route' : 'Inactive: this binding does not fire right now'}
          </p>
          {trigger.error ? (
            <p className="mt-0.5" data-testid="trigger-inactive-reason">
              {trigger.error.replace(/^shadowed: /, '')}
            </p>
          ) : (
            <p className="mt-0.5">
              No worker provides the trigger type <span className="font-mono">{trigger.trigger_type}</span> at the moment. The engine keeps
              the binding and hands it to the provider as soon as one registers the type.
            </p>
          )}
        </div>
      ) : null}
      {kind === 'http' ? (
        <PanelSection title="Test HTTP trigger">
          <HttpTestPanel config={trigger.config} functionId={trigger.function_id} />
        </PanelSection>
      ) : null}
      {kind === 'cron' ? (
        <PanelSection title="Schedule">
          <CronPanel triggerId={trigger.id} config={trigger.config} functionId={trigger.function_id} />
        </PanelSection>
      ) : null}
      {kind === 'event' ? (
        <PanelSection title="Emit event">
          <EmitPanel config={trigger.config} />
        </PanelSection>
      ) : null}
      {kind === 'state' ? (
        <PanelSection title="Test">
          <p className="text-[13px] text-muted">
            State triggers fire when an entry of their scope changes. Add, edit or delete an entry on the{' '}
            <Link to="/states" className="text-accent hover:underline">
              States page
            </Link>{' '}
            to fire this one.
          </p>
        </PanelSection>
      ) : null}
      <PanelSection title="Details">
        <DefinitionList
          items={[
            [
              'Trigger id',
              <span key="id" className="inline-flex items-center gap-1 font-mono text-[12px]">
                {trigger.id}
                <CopyButton text={trigger.id} label="Copy trigger id" />
              </span>,
            ],
            ['Status', <TriggerStatus key="s" trigger={trigger} functionMissing={functionMissing} />],
            ['Worker', trigger.worker_name],
            [
              'Type',
              <span key="t" className="font-mono">
                {trigger.trigger_type}
              </span>,
            ],
          ]}
        />
      </PanelSection>
      <PanelSection title="Configuration">
        <JsonView value={trigger.config} label="configuration" maxHeight={260} />
      </PanelSection>
      {trigger.metadata && Object.keys(trigger.metadata).length ? (
        <PanelSection title="Metadata">
          <JsonView value={trigger.metadata} label="metadata" maxHeight={200} />
        </PanelSection>
      ) : null}
    </DetailPanel>
  );
}
