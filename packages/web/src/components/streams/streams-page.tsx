import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { RefreshCw } from 'lucide-react';
import { useMemo } from 'react';
import { streamMonitor, useStreamMonitor } from '../../api/stream-monitor.ts';
import { isSystemStream, streamKeys, useStreams } from '../../api/streams.ts';
import { IconButton } from '../ui/button.tsx';
import { Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { SectionTabs } from '../ui/tabs.tsx';
import { MonitorPanel } from './monitor-panel.tsx';
import { StreamItems } from './stream-items.tsx';
import { StreamList, streamRows } from './stream-list.tsx';

const route = getRouteApi('/streams');

/** Streams (seed 2.5): every stream group, the live monitor, and the items each group stores. */
export function StreamsPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const qc = useQueryClient();
  const streams = useStreams();
  const monitor = useStreamMonitor();
  const showSystem = search.system === true;
  const rows = useMemo(() => streamRows(streams.data, showSystem), [streams.data, showSystem]);
  const hiddenSystem = showSystem ? 0 : (streams.data ?? []).filter((s) => isSystemStream(s.id)).length;
  const subscribed = useMemo(() => new Set(monitor.subscriptions.map((s) => s.key)), [monitor.subscriptions]);
  const view = search.view ?? 'monitor';
  const set = (patch: Partial<typeof search>, replace = false) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace });

  return (
    <div className="flex h-full min-h-0 flex-col">
      <PageHeader
        title="Streams"
        description="Streams and their groups, a live monitor of their events, and the items they store."
        actions={
          <>
            <Toggle
              checked={showSystem}
              onChange={(v) => set({ system: v || undefined }, true)}
              label="System streams"
              title="Show the engine's own streams (eng: / iii: prefixes)"
            />
            <IconButton
              icon={RefreshCw}
              label="Refresh"
              onClick={() => void qc.invalidateQueries({ queryKey: streamKeys.all })}
              className={streams.isFetching ? 'animate-spin' : undefined}
            />
          </>
        }
      />
      <div className="flex min-h-0 flex-1 flex-col xl:grid xl:grid-cols-[minmax(320px,380px)_minmax(0,1fr)]">
        <section
          aria-label="Streams"
          className="min-h-0 shrink-0 overflow-y-auto border-line bg-surface max-xl:max-h-56 max-xl:border-b xl:border-r"
        >
          <StreamList
            rows={rows}
            hiddenSystem={hiddenSystem}
            loading={streams.isPending}
            error={streams.error}
            selected={{ stream: search.stream, group: search.group }}
            isSubscribed={(stream, group) => subscribed.has(streamMonitor.key(stream, group))}
            onSelect={(row) => set({ stream: row.stream, group: row.group })}
            onToggleSubscription={(row) => {
              const key = streamMonitor.key(row.stream, row.group);
              if (subscribed.has(key)) streamMonitor.unsubscribe(key);
              else streamMonitor.subscribe(row.stream, row.group);
            }}
          />
        </section>
        <section aria-label="Stream detail" className="flex min-h-0 min-w-0 flex-1 flex-col">
          <SectionTabs
            label="Stream views"
            value={view}
            onChange={(v) => set({ view: v === 'monitor' ? undefined : v }, true)}
            items={[
              // the messages the monitor received, the same number as its Total counter (the
              // subscriptions are counted where they are listed, below)
              { value: 'monitor', label: 'Live monitor', count: monitor.counters.total },
              { value: 'items', label: 'Stored items' },
            ]}
          />
          {view === 'monitor' ? (
            <MonitorPanel monitor={monitor} direction={search.dir} onDirection={(dir) => set({ dir }, true)} showSystem={showSystem} />
          ) : (
            <StreamItems stream={search.stream} group={search.group} />
          )}
        </section>
      </div>
    </div>
  );
}
