import type { TriggerRecord } from '../../api/triggers.ts';
import { describeCron } from '../../lib/cron-describe.ts';
import { KIND_LABEL, kindTone, type TriggerKind } from '../../lib/trigger-kind.ts';
import { Badge, CountBadge, StatusDot } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';

const GRID = 'grid grid-cols-[150px_minmax(0,1.3fr)_minmax(0,1.6fr)_96px] items-center gap-3';

export interface TriggerGroup {
  kind: TriggerKind;
  items: Array<{ trigger: TriggerRecord; summary: string }>;
}

const STATUS_LABEL = { active: 'Active', error: 'Error', inactive: 'Inactive' } as const;

/**
 * The engine's status of a binding. `functionMissing`: the engine still reports an active binding
 * when the function it calls has gone with its worker (another worker bound it), yet every firing
 * fails with function_not_found, so the page says so next to the status.
 */
export function TriggerStatus({ trigger, functionMissing }: { trigger: TriggerRecord; functionMissing?: boolean }) {
  const tone = trigger.status === 'active' ? (functionMissing ? 'warn' : 'ok') : trigger.status === 'error' ? 'bad' : 'neutral';
  return (
    <span
      className="inline-flex flex-wrap items-center gap-x-1.5 text-[12px]"
      data-status={trigger.status}
      title={
        trigger.error ??
        (trigger.status === 'inactive'
          ? 'No provider serves this trigger type right now'
          : functionMissing
            ? `${trigger.function_id} is not registered by any connected worker: firings fail with function_not_found`
            : undefined)
      }
    >
      <StatusDot tone={tone} />
      <span className={trigger.status === 'error' ? 'text-bad' : 'text-muted'}>
        {isShadowed(trigger) ? 'Shadowed' : (STATUS_LABEL[trigger.status] ?? trigger.status)}
      </span>
      {functionMissing ? <span className="text-warn">· no function</span> : null}
    </span>
  );
}

/** An HTTP binding whose route a later binding of the same method and path serves (engine reason `shadowed: …`). */
export function isShadowed(trigger: TriggerRecord): boolean {
  return trigger.status === 'inactive' && (trigger.error ?? '').startsWith('shadowed:');
}

/** Triggers grouped by kind with count badges (seed 2.3). */
export function TriggerList({
  groups,
  selected,
  onSelect,
  missingFunctions,
}: {
  groups: TriggerGroup[];
  selected?: string;
  onSelect: (id: string) => void;
  /** Function ids bound by a trigger that no connected worker registers. */
  missingFunctions?: ReadonlySet<string>;
}) {
  return (
    <div className="min-h-0 flex-1 overflow-auto">
      {/* a phone-wide window scrolls the table sideways inside this pane instead of crushing its columns */}
      <div className="min-w-[36rem]">
        <div
          aria-hidden="true"
          className={cn(
            GRID,
            'sticky top-0 z-10 h-9 border-b border-line bg-surface-2 px-4 text-[11px] font-semibold tracking-wider text-faint uppercase',
          )}
        >
          <span>Type</span>
          <span>Function</span>
          <span>Path / Config</span>
          <span>Status</span>
        </div>
        {groups.map((group) => (
          <section key={group.kind} aria-label={`${KIND_LABEL[group.kind]} triggers`} data-testid={`trigger-group-${group.kind}`}>
            <h2 className="flex h-8 items-center gap-2 border-b border-line bg-bg/70 px-4 text-[11.5px] font-semibold tracking-wide text-muted uppercase">
              {KIND_LABEL[group.kind]}
              <CountBadge value={group.items.length} />
            </h2>
            <ul>
              {group.items.map(({ trigger, summary }) => {
                const active = trigger.id === selected;
                const readable = trigger.trigger_type === 'cron' ? describeCron(summary) : undefined;
                return (
                  <li key={trigger.id}>
                    <button
                      type="button"
                      aria-current={active ? 'true' : undefined}
                      data-trigger-id={trigger.id}
                      onClick={() => onSelect(trigger.id)}
                      className={cn(
                        GRID,
                        'min-h-11 w-full cursor-pointer border-b border-line px-4 py-1.5 text-left outline-none focus-visible:bg-surface-2',
                        active ? 'bg-accent-soft/70' : 'hover:bg-surface-2/70',
                      )}
                    >
                      <span>
                        <Badge tone={kindTone(group.kind)} mono>
                          {trigger.trigger_type}
                        </Badge>
                      </span>
                      <span className="min-w-0">
                        <span className="block truncate font-mono text-[12.5px] text-fg">{trigger.function_id}</span>
                        <span className="block truncate text-[11.5px] text-faint">{trigger.worker_name}</span>
                      </span>
                      <span className="min-w-0">
                        <span className="block truncate font-mono text-[12.5px] text-fg">{summary}</span>
                        {readable ? <span className="block truncate text-[11.5px] text-muted">{readable}</span> : null}
                      </span>
                      <span>
                        <TriggerStatus trigger={trigger} functionMissing={missingFunctions?.has(trigger.function_id)} />
                      </span>
                    </button>
                  </li>
                );
              })}
            </ul>
          </section>
        ))}
      </div>
    </div>
  );
}
