import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { RefreshCw, SearchX, SquareFunction } from 'lucide-react';
import { useEffect, useMemo, useState } from 'react';
import { isSystemFunction, useFunctions } from '../../api/functions.ts';
import { useTriggers } from '../../api/triggers.ts';
import { useWorkers, type WorkerRecord } from '../../api/workers.ts';
import { useKeydown } from '../../lib/keyboard.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { SearchInput, Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { FunctionDetail } from './function-detail.tsx';
import { FunctionList } from './function-list.tsx';
import { buildRows, isPlatformFunction, summariseTriggers, workerOf } from './function-rows.ts';

const route = getRouteApi('/functions');

/** Functions (seed 2.2): grouped by namespace, searchable, system toggle, detail with Invoke. */
export function FunctionsPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/functions' });
  const functions = useFunctions();
  const triggers = useTriggers();
  const workers = useWorkers();
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const [platformOpen, setPlatformOpen] = useState(false);
  const query = search.q ?? '';
  const showSystem = search.system ?? false;

  const triggerSummary = useMemo(() => summariseTriggers(triggers.data), [triggers.data]);
  const workerMap = useMemo(() => new Map<string, WorkerRecord>((workers.data ?? []).map((w) => [w.id, w])), [workers.data]);
  const { rows, shown, hiddenSystem } = useMemo(
    () => buildRows(functions.data ?? [], triggerSummary, workerMap, { search: query, showSystem, collapsed, platformOpen }),
    [functions.data, triggerSummary, workerMap, query, showSystem, collapsed, platformOpen],
  );
  const selected = useMemo(() => functions.data?.find((f) => f.function_id === search.fn), [functions.data, search.fn]);
  // a platform function chosen elsewhere (palette, link, URL) opens its section so the list shows it
  const selectedIsPlatform = !!selected && !isSystemFunction(selected) && isPlatformFunction(selected);
  useEffect(() => {
    if (selectedIsPlatform) setPlatformOpen(true);
  }, [selectedIsPlatform]);

  const setSearch = (patch: Partial<typeof search>) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: true });
  useKeydown((e) => {
    if (e.key === 'Escape' && search.fn && !e.defaultPrevented) setSearch({ fn: undefined });
  });

  const total = functions.data?.length ?? 0;
  return (
    <div className="flex h-full flex-col">
      <PageHeader
        title="Functions"
        badge={functions.data ? <Badge>{shown}</Badge> : null}
        description="Every function registered by a connected worker or engine module. Select one to see its schema and invoke it."
        actions={
          <Button size="sm" icon={RefreshCw} loading={functions.isFetching} onClick={() => void functions.refetch()}>
            Refresh
          </Button>
        }
      >
        <SearchInput
          value={query}
          onChange={(q) => setSearch({ q: q || undefined })}
          placeholder="Search functions by id or description"
          className="w-full max-w-sm"
        />
        <Toggle
          checked={showSystem}
          onChange={(v) => setSearch({ system: v || undefined })}
          label="System"
          title="Show the engine's built-in functions"
        />
        {!showSystem && hiddenSystem > 0 ? <span className="text-[12px] text-faint">{hiddenSystem} system hidden</span> : null}
      </PageHeader>
      <div className="flex min-h-0 flex-1">
        <div className="flex min-w-0 flex-1 flex-col">
          {functions.isPending ? (
            <LoadingNote what="functions" className="flex-1" />
          ) : functions.isError ? (
            <div className="p-6">
              <ErrorNote title="Could not list functions" error={functions.error} />
            </div>
          ) : total === 0 || (shown === 0 && !query) ? (
            <EmptyState icon={SquareFunction} title="No functions registered yet">
              Functions appear here as soon as a worker registers them. Start one, for example <code className="font-mono">npm start</code>{' '}
              runs the orders demo, or register a function with <code className="font-mono">client.registerFunction()</code> from{' '}
              <code className="font-mono">@eng/sdk</code> or <code className="font-mono">iii-sdk</code>.
              {hiddenSystem > 0 ? ' Turn on System to see the engine’s built-in functions.' : ''}
            </EmptyState>
          ) : shown === 0 ? (
            <EmptyState
              icon={SearchX}
              title={`No function matches “${query}”`}
              action={
                <Button size="sm" onClick={() => setSearch({ q: undefined })}>
                  Clear search
                </Button>
              }
            >
              {hiddenSystem > 0 && !showSystem
                ? 'System functions are hidden; turn on System to search them too.'
                : 'Search matches function ids and descriptions.'}
            </EmptyState>
          ) : (
            <FunctionList
              rows={rows}
              selected={search.fn}
              compact={!!selected}
              onSelect={(id) => setSearch({ fn: id })}
              onToggleSection={() => setPlatformOpen((open) => !open)}
              onToggleGroup={(ns) =>
                setCollapsed((prev) => {
                  const next = new Set(prev);
                  if (next.has(ns)) next.delete(ns);
                  else next.add(ns);
                  return next;
                })
              }
            />
          )}
        </div>
        {selected ? (
          <FunctionDetail
            key={selected.function_id}
            fn={selected}
            triggers={(triggers.data ?? []).filter((t) => t.function_id === selected.function_id)}
            worker={workerOf(selected, workerMap)}
            tab={search.tab ?? 'invoke'}
            onTab={(tab) => setSearch({ tab: tab === 'invoke' ? undefined : tab })}
            onClose={() => setSearch({ fn: undefined, tab: undefined })}
          />
        ) : search.fn && functions.data ? (
          <aside className="hidden w-[380px] shrink-0 border-l border-line lg:block">
            <EmptyState title="Function not registered" compact>
              <code className="font-mono">{search.fn}</code> is not registered right now. Its worker may have stopped or disconnected.
            </EmptyState>
          </aside>
        ) : null}
      </div>
    </div>
  );
}
