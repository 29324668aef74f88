import { useNavigate } from '@tanstack/react-router';
import { Workflow } from 'lucide-react';
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { serverKindOf, useConsoleConfig } from '../../api/console-config.ts';
import { useFlowLayout, useObservedSpans, useResetFlowLayout, useSaveFlowLayout } from '../../api/flow.ts';
import { isSystemFunction, useFunctions } from '../../api/functions.ts';
import { isSystemTrigger, useTriggers } from '../../api/triggers.ts';
import { FILTER_KINDS, type FlowKind } from '../../lib/flow-kinds.ts';
import { formatCount, formatTime, pluralize } from '../../lib/format.ts';
import { flowRoute } from '../../routes/flow.tsx';
import { DebouncedSearch } from '../traces/debounced-input.tsx';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { FlowDetail } from './flow-detail.tsx';
import { buildFlowGraph, type FlowPack, flowView, observedUses } from './flow-graph.ts';
import { KIND_VISUAL } from './flow-node-visual.ts';

const canvasChunk = () => import('./flow-canvas.tsx');
const FlowCanvas = lazy(canvasChunk);

/** How long after the last drag the layout is written (and flushed when leaving the page). */
const SAVE_DELAY_MS = 300;

/** Where the "Show unconnected" choice is kept (a preference: a later visit from the navigation keeps it). */
export const UNCONNECTED_PREF = 'eng-flow-unconnected';

function readShowUnconnected(): boolean {
  try {
    return localStorage.getItem(UNCONNECTED_PREF) === 'shown';
  } catch {
    return false;
  }
}

/** "Show unconnected", remembered in local storage. */
function useShowUnconnected(): [boolean, (value: boolean) => void] {
  const [value, setValue] = useState(readShowUnconnected);
  const set = useCallback((next: boolean) => {
    setValue(next);
    try {
      if (next) localStorage.setItem(UNCONNECTED_PREF, 'shown');
      else localStorage.removeItem(UNCONNECTED_PREF);
    } catch {
      // private mode: the choice lasts for this page only
    }
  }, []);
  return [value, set];
}

/** Seed 2.8 Flow: only with `--enable-flow` / `ENG_ENABLE_FLOW` (the nav entry is hidden otherwise). */
export function FlowPage() {
  const config = useConsoleConfig();
  if (config.isPending) {
    return (
      <div className="flex h-full items-center justify-center gap-2 text-sm text-muted">
        <Spinner /> Loading…
      </div>
    );
  }
  const enabled = config.data?.available === true && config.data.config.enable_flow;
  if (!enabled) {
    return (
      <div>
        <PageHeader title="Flow" description="Triggers → functions → state stores and queues, as a graph." />
        <EmptyState icon={Workflow} title="The Flow page is off">
          {serverKindOf(config.data) === 'console-worker' ? (
            <p>
              Add <code className="font-mono">enable_flow: true</code> to the <code className="font-mono">console</code> entry of the
              engine’s config.yaml (or start the worker with <code className="font-mono">--enable-flow</code>, or set{' '}
              <code className="font-mono">ENG_ENABLE_FLOW=1</code>) to see the graph of your triggers, functions, state stores and queues.
            </p>
          ) : (
            <p>
              Start the console with <code className="font-mono">eng-console --enable-flow</code> (or set{' '}
              <code className="font-mono">ENG_ENABLE_FLOW=1</code>) to see the graph of your triggers, functions, state stores and queues.
            </p>
          )}
          {config.data?.available === false ? <p className="mt-2 text-xs text-faint">This server reports: {config.data.reason}.</p> : null}
        </EmptyState>
      </div>
    );
  }
  // fetch the canvas (React Flow) while the functions and triggers are read
  void canvasChunk();
  return <FlowView />;
}

function FlowView() {
  const search = flowRoute.useSearch();
  const navigate = useNavigate();
  const functions = useFunctions();
  const triggers = useTriggers();
  const observedSpans = useObservedSpans();
  const layout = useFlowLayout();
  const save = useSaveFlowLayout();
  const reset = useResetFlowLayout();
  const [epoch, setEpoch] = useState(0);
  const showSystem = !!search.system;

  const observed = useMemo(() => observedUses(observedSpans.data ?? []), [observedSpans.data]);
  const graph = useMemo(
    () =>
      buildFlowGraph({
        functions: functions.data ?? [],
        triggers: triggers.data ?? [],
        observed,
        isSystemFunction,
        isSystemTrigger,
        showSystem,
      }),
    [functions.data, triggers.data, observed, showSystem],
  );
  // issue 25 item 8: the functions nothing triggers or relates are packed by worker unless shown;
  // a pack opens by a click (`open`), and a node asked for (`node`) opens its pack
  const [showUnconnected, setShowUnconnected] = useShowUnconnected();
  const openKey = (search.open ?? []).join(',');
  // issue 19 §9: search and kind chips narrow a big graph to what matches and its neighbours (all
  // of it: a search finds packed functions too); a large graph opens on its overview, one node per
  // namespace of functions, groups of routes and schedules
  const kindsKey = (search.kinds ?? []).join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: the kinds and opened packs change when their joined forms do
  const shown = useMemo(
    () =>
      flowView(graph, {
        query: search.q,
        kinds: search.kinds,
        showUnconnected,
        open: search.open,
        node: search.node,
      }),
    [graph, search.q, kindsKey, showUnconnected, openKey, search.node],
  );
  const { unconnected } = shown;
  const filtered = shown.mode === 'filtered';
  const overview = shown.mode === 'overview';
  // what the view frames when the whole graph is too big to read at once: the connected graph on
  // arrival, the open packs once the person opened one (or all)
  const [packsTouched, setPacksTouched] = useState(false);
  const openPacks = useMemo(() => shown.nodes.filter((n) => n.data.pack?.expanded).map((n) => n.data.pack?.key as string), [shown]);
  const focus = useMemo(() => {
    if (!packsTouched) return shown.nodes.filter((n) => !n.data.pack && !n.data.packKey).map((n) => n.id);
    const keys = new Set(openPacks);
    return shown.nodes.filter((n) => keys.has(n.data.pack?.key ?? n.data.packKey ?? '\u0000')).map((n) => n.id);
  }, [shown, openPacks, packsTouched]);
  const togglePack = (pack: FlowPack) => {
    setPacksTouched(true);
    const all = shown.nodes.flatMap((n) => (n.data.pack ? [n.data.pack.key] : []));
    let open: string[];
    if (!pack.expanded) open = [...(search.open ?? []), pack.key];
    else if (showUnconnected) {
      // every pack was shown: this one closes, the others stay open
      setShowUnconnected(false);
      open = all.filter((k) => k !== pack.key);
    } else open = (search.open ?? []).filter((k) => k !== pack.key);
    const member = shown.nodes.find((n) => n.id === search.node)?.data.packKey === pack.key;
    void navigate({
      to: '/flow',
      search: (prev) => ({ ...prev, open: open.length ? open : undefined, node: pack.expanded && member ? undefined : prev.node }),
      replace: true,
    });
  };
  const setShowAll = (value: boolean) => {
    setPacksTouched(true);
    setShowUnconnected(value);
    // one switch for all of them: packs opened one by one are forgotten
    if (search.open) void navigate({ to: '/flow', search: (prev) => ({ ...prev, open: undefined }), replace: true });
  };
  const toggleKind = (kind: FlowKind) => {
    const next = new Set(search.kinds ?? []);
    if (next.has(kind)) next.delete(kind);
    else next.add(kind);
    const kinds = FILTER_KINDS.filter((k) => next.has(k));
    void navigate({ to: '/flow', search: (prev) => ({ ...prev, kinds: kinds.length ? kinds : undefined }), replace: true });
  };

  // spec: console §4 Flow "after a drag (debounced 300 ms, and flushed on unmount)"
  const pending = useRef<Record<string, { x: number; y: number }> | null>(null);
  const timer = useRef<number | undefined>(undefined);
  const mutate = save.mutate;
  const flush = useCallback(() => {
    window.clearTimeout(timer.current);
    if (pending.current) mutate(pending.current);
    pending.current = null;
  }, [mutate]);
  useEffect(() => {
    window.addEventListener('pagehide', flush);
    return () => {
      window.removeEventListener('pagehide', flush);
      flush();
    };
  }, [flush]);
  const onLayoutChange = useCallback(
    (positions: Record<string, { x: number; y: number }>) => {
      pending.current = positions;
      window.clearTimeout(timer.current);
      timer.current = window.setTimeout(flush, SAVE_DELAY_MS);
    },
    [flush],
  );

  const select = (node: string | undefined) => {
    const data = node ? shown.nodes.find((n) => n.id === node)?.data : undefined;
    if (data?.pack) return togglePack(data.pack);
    const group = data?.group;
    // a group of the overview opens what it stands for
    if (group)
      void navigate({
        to: '/flow',
        search: (prev) => ({ ...prev, node: undefined, q: group.query, kinds: group.kind ? [group.kind] : undefined }),
      });
    else void navigate({ to: '/flow', search: (prev) => ({ ...prev, node }), replace: true });
  };
  const ready = functions.data && triggers.data && !layout.isPending;
  const error = functions.error ?? triggers.error;
  const savedAt = layout.data?.saved_at;

  return (
    <div className="flex h-full min-h-0 flex-col" data-testid="flow-page">
      <PageHeader
        title="Flow"
        badge={<Badge tone="violet">beta</Badge>}
        description={
          <span className="max-sm:hidden">
            Triggers → functions → state stores and queues. Drag nodes to arrange them; the layout is saved in the engine's state store.
          </span>
        }
        actions={
          <>
            <span className="text-xs text-muted" data-testid="flow-layout-status">
              {save.isPending
                ? 'Saving layout…'
                : save.isError
                  ? 'Could not save the layout'
                  : savedAt
                    ? `Layout saved ${formatTime(savedAt)}`
                    : 'Automatic layout'}
            </span>
            <span className="mx-1 h-4 w-px bg-line max-sm:hidden" aria-hidden="true" />
            <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
              {unconnected.packed > 0 ? (
                <Toggle
                  checked={showUnconnected}
                  onChange={setShowAll}
                  label={`Show unconnected (${unconnected.packed})`}
                  title="Show the functions that no trigger calls and no known relation links, instead of packing them by worker"
                />
              ) : null}
              <Toggle
                checked={showSystem}
                onChange={(v) => void navigate({ to: '/flow', search: (prev) => ({ ...prev, system: v || undefined }), replace: true })}
                label="System"
                title="Show engine-internal functions and triggers"
              />
            </div>
          </>
        }
      >
        <div className="flex flex-wrap items-center gap-2">
          <DebouncedSearch
            value={search.q}
            onCommit={(q) => void navigate({ to: '/flow', search: (prev) => ({ ...prev, q }), replace: true })}
            placeholder="Search nodes: function, route, topic, scope…"
            className="w-full max-w-sm"
          />
          <fieldset className="flex flex-wrap items-center gap-1" data-testid="flow-kind-filter">
            <legend className="sr-only">Show only these kinds (with their neighbours)</legend>
            {FILTER_KINDS.map((kind) => {
              const visual = KIND_VISUAL[kind];
              const Icon = visual.icon;
              const on = search.kinds?.includes(kind) ?? false;
              return (
                <button
                  key={kind}
                  type="button"
                  aria-pressed={on}
                  onClick={() => toggleKind(kind)}
                  data-kind={kind}
                  className={cn(
                    'inline-flex h-7 cursor-pointer items-center gap-1.5 rounded-md border px-2 text-[12.5px] font-medium',
                    on ? 'border-accent bg-accent-soft text-fg' : 'border-line bg-surface text-muted hover:text-fg',
                  )}
                >
                  <Icon size={13} style={{ color: visual.color }} aria-hidden="true" /> {visual.caption}
                </button>
              );
            })}
          </fieldset>
        </div>
        <span className="text-xs text-muted" data-testid="flow-counts">
          {filtered
            ? `${pluralize(shown.matches, 'match', 'matches')} · showing ${formatCount(shown.nodes.length)} of ${pluralize(graph.nodes.length, 'node')}`
            : graph.nodes.length > unconnected.functions
              ? `${pluralize(graph.nodes.length - unconnected.functions, 'node')} · ${pluralize(graph.edges.length, 'edge')}`
              : 'No triggers yet'}
          {observed.length > 0 ? ` · ${pluralize(observed.length, 'relation')} seen in recent traces` : ''}
          {!filtered && unconnected.packed > 0
            ? showUnconnected
              ? ` · ${pluralize(unconnected.packed, 'function')} without triggers, shown below the graph`
              : ` · ${pluralize(unconnected.packed, 'function')} without triggers, packed by worker: click a pack to open it`
            : ''}
          {overview ? ` · a large graph, shown by namespace: click a group, search or pick a kind to see its nodes` : ''}
        </span>
      </PageHeader>
      {error ? <ErrorNote className="m-4" title="Could not read functions or triggers" error={error} /> : null}
      <div className="flex min-h-0 flex-1">
        <div className="relative min-w-0 flex-1">
          {ready && !filtered && unconnected.functions > 0 && unconnected.connectedFunctions === 0 ? (
            <div className="pointer-events-none absolute inset-x-0 bottom-4 z-10 flex justify-center px-14" data-testid="flow-empty-note">
              <p className="max-w-md rounded-lg border border-line bg-surface/95 px-3 py-2 text-center text-[12.5px] text-muted shadow-card">
                <span className="font-medium text-fg">No function has a trigger yet.</span> A function joins the graph once an HTTP route, a
                schedule, an event, a queue or a state change calls it; until then they are packed by worker.
              </p>
            </div>
          ) : null}
          {!ready ? (
            <div className="flex h-full items-center justify-center gap-2 text-sm text-muted">
              <Spinner /> Loading the graph…
            </div>
          ) : graph.nodes.length > 0 && shown.nodes.length === 0 ? (
            <EmptyState icon={Workflow} title="No node matches">
              Nothing in the graph matches {search.q ? <>“{search.q}”</> : null}
              {search.kinds ? ` among ${search.kinds.map((k) => KIND_VISUAL[k].caption).join(', ')}` : ''}. Clear the search or the kinds to
              see the whole graph.
            </EmptyState>
          ) : graph.nodes.length === 0 ? (
            <EmptyState icon={Workflow} title="Nothing to draw yet">
              Connect a worker that registers functions and triggers (for example <code className="font-mono">npm start</code> runs the
              orders demo); they appear here as a graph.
            </EmptyState>
          ) : (
            <Suspense
              fallback={
                <div className="flex h-full items-center justify-center gap-2 text-sm text-muted">
                  <Spinner /> Loading the graph…
                </div>
              }
            >
              <FlowCanvas
                graph={shown}
                filtered={filtered || overview}
                viewKey={filtered ? `${search.q ?? ''}|${kindsKey}` : overview ? 'overview' : `all|${openPacks.join(',')}`}
                focus={focus}
                saved={layout.data?.positions ?? null}
                layoutEpoch={epoch}
                onLayoutChange={onLayoutChange}
                onSelect={select}
                onAutoOrganize={() => {
                  pending.current = null;
                  window.clearTimeout(timer.current);
                  reset.mutate();
                  setEpoch((e) => e + 1);
                }}
              />
            </Suspense>
          )}
        </div>
        {search.node && shown.nodes.some((n) => n.id === search.node) ? (
          <FlowDetail graph={shown} nodeId={search.node} onSelect={select} onClose={() => select(undefined)} />
        ) : null}
      </div>
    </div>
  );
}
