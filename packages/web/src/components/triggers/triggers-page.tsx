import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { RefreshCw, SearchX, Zap } from 'lucide-react';
import { useMemo } from 'react';
import { useFunctions } from '../../api/functions.ts';
import { isSystemTrigger, useTriggers } from '../../api/triggers.ts';
import { useKeydown } from '../../lib/keyboard.ts';
import { summarise } from '../../lib/trigger-config.ts';
import { KIND_LABEL, KIND_ORDER, kindOf, type TriggerKind } from '../../lib/trigger-kind.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { SearchInput, Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { type TabItem, Tabs } from '../ui/tabs.tsx';
import { TriggerDetail } from './trigger-detail.tsx';
import { type TriggerGroup, TriggerList } from './trigger-list.tsx';

const route = getRouteApi('/triggers');

/** Triggers (seed 2.3): grouped by kind, count badges, per-type filter tabs, test tools. */
export function TriggersPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/triggers' });
  const triggers = useTriggers();
  const functions = useFunctions();
  const setSearch = (patch: Partial<typeof search>) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: true });
  const query = (search.q ?? '').trim().toLowerCase();
  const showSystem = search.system ?? false;
  const tab = (search.type ?? 'all') as TriggerKind | 'all';

  const { groups, counts, total, hiddenSystem } = useMemo(() => {
    const counts = new Map<TriggerKind, number>();
    const byKind = new Map<TriggerKind, TriggerGroup['items']>();
    let total = 0;
    let hiddenSystem = 0;
    for (const trigger of triggers.data ?? []) {
      if (!showSystem && isSystemTrigger(trigger)) {
        hiddenSystem++;
        continue;
      }
      const summary = summarise(trigger.trigger_type, trigger.config, trigger.config_summary);
      if (query && !`${trigger.id} ${trigger.trigger_type} ${trigger.function_id} ${summary}`.toLowerCase().includes(query)) continue;
      const kind = kindOf(trigger.trigger_type);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      total++;
      if (tab !== 'all' && kind !== tab) continue;
      const list = byKind.get(kind) ?? [];
      list.push({ trigger, summary });
      byKind.set(kind, list);
    }
    const groups = KIND_ORDER.filter((k) => byKind.has(k)).map((kind) => ({ kind, items: byKind.get(kind) ?? [] }));
    return { groups, counts, total, hiddenSystem };
  }, [triggers.data, showSystem, query, tab]);

  // bindings whose function no connected worker registers (known only once the function list is in)
  const missingFunctions = useMemo(() => {
    if (!functions.data) return new Set<string>();
    const registered = new Set(functions.data.map((f) => f.function_id));
    return new Set((triggers.data ?? []).map((t) => t.function_id).filter((id) => !registered.has(id)));
  }, [functions.data, triggers.data]);

  const selected = useMemo(() => {
    // looked up in the full list: a search must not close the open trigger
    const trigger = triggers.data?.find((t) => t.id === search.id);
    return trigger
      ? { trigger, kind: kindOf(trigger.trigger_type), summary: summarise(trigger.trigger_type, trigger.config, trigger.config_summary) }
      : undefined;
  }, [triggers.data, search.id]);
  useKeydown((e) => {
    if (e.key === 'Escape' && search.id && !e.defaultPrevented) setSearch({ id: undefined });
  });

  const tabs: TabItem<TriggerKind | 'all'>[] = [
    { value: 'all', label: 'All', count: total },
    ...KIND_ORDER.filter((k) => counts.has(k) || k === tab).map((k) => ({ value: k, label: KIND_LABEL[k], count: counts.get(k) ?? 0 })),
  ];
  const shown = groups.reduce((n, g) => n + g.items.length, 0);

  return (
    <div className="flex h-full flex-col">
      <PageHeader
        title="Triggers"
        badge={triggers.data ? <Badge>{total}</Badge> : null}
        description="What makes functions run: HTTP routes, schedules, events, queues, state and stream changes."
        actions={
          <Button size="sm" icon={RefreshCw} loading={triggers.isFetching} onClick={() => void triggers.refetch()}>
            Refresh
          </Button>
        }
      >
        <Tabs label="Trigger type" items={tabs} value={tab} onChange={(v) => setSearch({ type: v === 'all' ? undefined : v })} />
        <SearchInput
          value={search.q ?? ''}
          onChange={(q) => setSearch({ q: q || undefined })}
          placeholder="Search by function, path, topic, schedule"
          className="w-full max-w-xs"
        />
        <Toggle
          checked={showSystem}
          onChange={(v) => setSearch({ system: v || undefined })}
          label="System"
          title="Show the engine's own bindings"
        />
        {!showSystem && hiddenSystem > 0 ? <span className="text-[12px] text-faint">{hiddenSystem} system hidden</span> : null}
      </PageHeader>
      <div className="flex min-h-0 flex-1">
        <div className="flex min-w-0 flex-1 flex-col">
          {triggers.isPending ? (
            <LoadingNote what="triggers" className="flex-1" />
          ) : triggers.isError ? (
            <div className="p-6">
              <ErrorNote title="Could not list triggers" error={triggers.error} />
            </div>
          ) : total === 0 && !query ? (
            <EmptyState icon={Zap} title="No triggers yet">
              Triggers bind a function to an HTTP route, a cron schedule, an event topic, a queue or a state scope. Register one from a
              worker with{' '}
              <code className="font-mono">
                client.registerTrigger({'{'} type, function_id, config {'}'})
              </code>
              , or start the orders demo with <code className="font-mono">npm start</code>.
            </EmptyState>
          ) : shown === 0 ? (
            <EmptyState
              icon={SearchX}
              title="No trigger matches"
              action={
                <Button size="sm" onClick={() => setSearch({ q: undefined, type: undefined })}>
                  Clear filters
                </Button>
              }
            >
              Nothing of this type matches the search.
            </EmptyState>
          ) : (
            <TriggerList groups={groups} selected={search.id} onSelect={(id) => setSearch({ id })} missingFunctions={missingFunctions} />
          )}
        </div>
        {selected ? (
          <TriggerDetail
            key={selected.trigger.id}
            trigger={selected.trigger}
            kind={selected.kind}
            summary={selected.summary}
            functionMissing={missingFunctions.has(selected.trigger.function_id)}
            onClose={() => setSearch({ id: undefined })}
          />
        ) : null}
      </div>
    </div>
  );
}
