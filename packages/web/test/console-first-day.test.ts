import type { FunctionRecord, TriggerRecord, WorkerRecord } from '@eng/protocol';
import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { createShutdownRollback } from '../src/api/shutdown-rollback.ts';
import {
  countsOf,
  type DashboardSnapshot,
  type EngineCall,
  isTorn,
  readDashboardSnapshot,
} from '../src/components/dashboard/dashboard-snapshot.ts';
import { buildRows, isPlatformFunction } from '../src/components/functions/function-rows.ts';
import { displayName } from '../src/components/traces/span-facts.ts';
import { spanPanelLayout } from '../src/components/traces/span-panel-layout.ts';
import { timeUntil, upcomingRuns } from '../src/lib/cron-describe.ts';

// issue 25 items 14 and 15: the pure logic behind the dashboard snapshot, the Functions list's
// platform section, the cron panel's next runs, cron root spans and the span panel's placement

function fn(function_id: string, worker: { name: string; id: string | null }, kind: FunctionRecord['kind'] = 'user'): FunctionRecord {
  return {
    function_id,
    worker_name: worker.name,
    worker_id: worker.id,
    description: null,
    request_format: null,
    response_format: null,
    metadata: null,
    kind,
  };
}

function worker(name: string, id: string, functions: string[], runtime = 'node'): WorkerRecord {
  return {
    id,
    name,
    description: null,
    runtime,
    version: null,
    os: null,
    ip_address: null,
    internal: runtime === 'engine',
    status: 'connected',
    connected_at_ms: 0,
    function_count: functions.length,
    functions,
    active_invocations: 0,
    latest_metrics: null,
    pid: null,
    isolation: null,
  };
}

function trigger(id: string, trigger_type: string, function_id: string, workerId: string | null): TriggerRecord {
  return { id, trigger_type, function_id, worker_name: 'w', worker_id: workerId, config: {}, config_summary: '', status: 'active' };
}

const orders = { name: 'orders', id: 'w-orders' };
const billing = { name: 'billing', id: 'w-billing' };
const state = { name: 'eng-state', id: 'eng-state' };

/** The engine before and after the `billing` worker leaves, as its list functions answer. */
const engineWith = (withBilling: boolean) => ({
  functions: [
    fn('state::get', state, 'internal'),
    fn('orders::create', orders),
    fn('orders::list', orders),
    ...(withBilling ? [fn('billing::charge', billing), fn('billing::refund', billing)] : []),
  ],
  triggers: [
    trigger('t1', 'http', 'orders::create', orders.id),
    trigger('t2', 'cron', 'orders::list', orders.id),
    ...(withBilling ? [trigger('t3', 'subscribe', 'billing::charge', billing.id)] : []),
  ],
  workers: [
    worker('eng-state', 'eng-state', ['state::get'], 'engine'),
    worker('orders', orders.id, ['orders::create', 'orders::list']),
    ...(withBilling ? [worker('billing', billing.id, ['billing::charge', 'billing::refund'])] : []),
  ],
});

/** A fake engine whose lists answer from `states`, one state per list call in the order given. */
function scriptedEngine(perCall: Array<'before' | 'after'>): { call: EngineCall; calls: string[] } {
  const calls: string[] = [];
  let i = 0;
  const call = (async (id: string) => {
    const moment = perCall[Math.min(i++, perCall.length - 1)] === 'before' ? engineWith(true) : engineWith(false);
    calls.push(id);
    if (id === 'engine::functions::list') return { functions: moment.functions };
    if (id === 'engine::registered-triggers::list') return { registered_triggers: moment.triggers };
    if (id === 'engine::workers::list') return { workers: moment.workers };
    if (id === 'stream::list_all') return { stream: [{ id: 'orders', groups: ['live'] }] };
    throw new Error(`unexpected ${id}`);
  }) as EngineCall;
  return { call, calls };
}

describe('dashboard snapshot', () => {
  it('counts every card from one read', () => {
    const counts = countsOf({ ...engineWith(true), streams: [{ id: 'orders', groups: ['live', 'audit'] }], at: 1 });
    expect(counts).toEqual({
      functions: 4,
      systemFunctions: 1,
      triggers: 3,
      triggerKinds: [
        ['HTTP', 1],
        ['Cron', 1],
        ['Event', 1],
      ],
      workers: 2,
      engineModules: 1,
      streams: 1,
      streamGroups: 2,
    });
  });

  it('a read torn by a worker leaving between its calls is read again: the counts never mix two moments', async () => {
    const previous: DashboardSnapshot = { ...engineWith(true), streams: [], at: 0 };
    // functions answered before billing left, triggers and workers after: 4 functions, 2 triggers, 1 worker
    const torn = { functions: engineWith(true).functions, triggers: engineWith(false).triggers, workers: engineWith(false).workers };
    expect(isTorn(torn, previous)).toBe(true);
    // the other way round: the workers still list billing, the functions no longer have its functions
    expect(isTorn({ functions: engineWith(false).functions, triggers: [], workers: engineWith(true).workers })).toBe(true);
    // either whole moment is coherent
    expect(isTorn(engineWith(true), previous)).toBe(false);
    expect(isTorn(engineWith(false), previous)).toBe(false);

    const engine = scriptedEngine(['before', 'after', 'after', 'after', 'after', 'after', 'after', 'after']);
    const read = await readDashboardSnapshot(engine.call, previous, () => 42);
    expect(engine.calls.length).toBe(8); // the torn read and one more
    const counts = countsOf(read);
    expect([counts.functions, counts.triggers, counts.workers]).toEqual([2, 2, 1]);
    expect(read.at).toBe(42);
  });

  it('a call that fails fails the whole read (the page keeps the previous set); a missing streams module does not', async () => {
    const failing = (async (id: string) => {
      if (id === 'engine::workers::list') throw Object.assign(new Error('engine unreachable'), { code: 'not_connected' });
      return scriptedEngine(['before']).call(id, {});
    }) as EngineCall;
    await expect(readDashboardSnapshot(failing)).rejects.toThrow('engine unreachable');

    const noStreams = (async (id: string) => {
      if (id === 'stream::list_all') throw Object.assign(new Error('no such function'), { code: 'function_not_found' });
      return scriptedEngine(['before']).call(id, {});
    }) as EngineCall;
    const read = await readDashboardSnapshot(noStreams);
    expect(read.streams).toBeNull();
    expect(countsOf(read).streams).toBeNull();
  });
});

describe('Functions list: platform workers after the application', () => {
  const harness = { name: 'harness', id: 'w-h' };
  const session = { name: 'session-manager', id: 'w-s' };
  const provider = { name: 'provider-openai', id: 'w-p' };
  const functions = [
    fn('session::list', session),
    fn('harness::send', harness),
    fn('provider::openai::generate', provider),
    fn('approval::decide', { name: 'approval-gate', id: 'w-a' }),
    fn('orders::create', orders),
    fn('reports::hourly_summary', orders),
    fn('console::status', { name: 'console', id: 'w-c' }),
    fn('state::get', state, 'internal'),
  ];
  const ids = (rows: ReturnType<typeof buildRows>['rows']) =>
    rows.map((r) =>
      r.kind === 'section'
        ? `[platform ${r.count}${r.collapsed ? ' collapsed' : ''}]`
        : r.kind === 'group'
          ? `#${r.namespace}`
          : r.fn.function_id,
    );

  it('recognises the chat stack, console, worktree and MCP workers by namespace or worker name', () => {
    expect(isPlatformFunction(fn('session::list', session))).toBe(true);
    expect(isPlatformFunction(fn('worktree::create', { name: 'worktree', id: 'x' }))).toBe(true);
    expect(isPlatformFunction(fn('mcp::tools', { name: 'mcp', id: 'x' }))).toBe(true);
    expect(isPlatformFunction(fn('models::list', { name: 'llm-router', id: 'x' }))).toBe(true);
    expect(isPlatformFunction(fn('orders::create', orders))).toBe(false);
    expect(isPlatformFunction(fn('sessions::create', { name: 'my-app', id: 'x' }))).toBe(false);
  });

  it('lists the user’s functions first and the platform workers’ in one collapsed section', () => {
    const { rows, shown, hiddenSystem } = buildRows(functions, new Map(), new Map(), {
      search: '',
      showSystem: false,
      collapsed: new Set(),
    });
    expect(ids(rows)).toEqual(['#orders', 'orders::create', '#reports', 'reports::hourly_summary', '[platform 5 collapsed]']);
    expect(shown).toBe(7);
    expect(hiddenSystem).toBe(1);
  });

  it('opened, the section lists its namespaces; a search finds platform functions without opening it by hand', () => {
    const open = buildRows(functions, new Map(), new Map(), { search: '', showSystem: false, collapsed: new Set(), platformOpen: true });
    expect(ids(open.rows).slice(4)).toEqual([
      '[platform 5]',
      '#approval',
      'approval::decide',
      '#console',
      'console::status',
      '#harness',
      'harness::send',
      '#provider',
      'provider::openai::generate',
      '#session',
      'session::list',
    ]);
    const searched = buildRows(functions, new Map(), new Map(), { search: 'session', showSystem: false, collapsed: new Set() });
    expect(ids(searched.rows)).toEqual(['[platform 1]', '#session', 'session::list']);
  });
});

describe('cron next runs', () => {
  const runs = ['2026-01-01T00:00:00+00:00', '2026-01-01T00:00:30+00:00', '2026-01-01T00:01:00+00:00', '2026-01-01T00:01:30+00:00'];
  const t = (iso: string) => Date.parse(iso);

  it('never lists a time that has passed, and says when fewer than asked remain', () => {
    const now = t('2026-01-01T00:00:10Z');
    expect(upcomingRuns(runs, now, 3)).toEqual({ times: runs.slice(1).map(t), short: false });
    // as time passes the list moves on: the run at :30 is gone once it is due
    expect(upcomingRuns(runs, t('2026-01-01T00:00:30Z'), 3)).toEqual({ times: runs.slice(2).map(t), short: true });
    expect(upcomingRuns(runs, t('2026-01-01T00:05:00Z'), 3)).toEqual({ times: [], short: true });
    expect(upcomingRuns(undefined, now, 3)).toEqual({ times: [], short: true });
  });

  it('words the wait without ever saying "now"', () => {
    const now = 1_000_000;
    expect(timeUntil(now + 400, now)).toBe('in 1s');
    expect(timeUntil(now + 59_000, now)).toBe('in 59s');
    expect(timeUntil(now + 125_000, now)).toBe('in 2m 5s');
    expect(timeUntil(now + 3_600_000 * 3 + 600_000, now)).toBe('in 3h 10m');
    expect(timeUntil(now + 86_400_000 * 2, now)).toBe('in 2d');
  });
});

describe('cron root spans', () => {
  it('name the function the firing ran', () => {
    expect(displayName({ name: 'cron_trigger', attributes: [['function_id', 'reports::hourly_summary']] })).toBe(
      'cron_trigger · reports::hourly_summary',
    );
    // spans from an engine that only set eng.trigger.function_id
    expect(displayName({ name: 'cron_trigger', attributes: [['eng.trigger.function_id', 'reports::daily']] })).toBe(
      'cron_trigger · reports::daily',
    );
    expect(displayName({ name: 'POST /orders', attributes: [['function_id', 'orders::create']] })).toBe('POST /orders');
  });
});

describe('span panel placement', () => {
  it('keeps a readable timeline: beside when both fit, below when the width is short, over it on a phone', () => {
    // 1440 px window with the list beside the trace: ~854 px for the trace
    expect(spanPanelLayout(854, 600, 400)).toBe('stack');
    // 1920 px window: room for both side by side
    expect(spanPanelLayout(1334, 700, 400)).toBe('side');
    expect(spanPanelLayout(390, 700, 400)).toBe('overlay');
    expect(spanPanelLayout(854, 300, 400)).toBe('overlay');
  });
});

describe('shutdown rollback and a page still loading', () => {
  it('a list that loaded after the burst began is put back too, as it was before the departures', () => {
    let t = 1_000_000;
    const qc = new QueryClient();
    const rollback = createShutdownRollback(qc, [['functions'], ['workers']], () => t);
    // the page loads: its own live registration is the first event, before the workers list arrived
    qc.setQueryData(['functions', 'list'], ['orders::create']);
    rollback.beforeLiveRefresh();
    t += 300;
    qc.setQueryData(['workers', 'list'], ['orders']);
    qc.setQueryData(['functions', 'dashboard-snapshot'], { workers: 1, functions: 1 });
    // seconds later the engine stops its workers: events, then the refetches answer without them
    t += 3000;
    rollback.beforeLiveRefresh();
    qc.setQueryData(['functions', 'list'], []);
    qc.setQueryData(['workers', 'list'], []);
    qc.setQueryData(['functions', 'dashboard-snapshot'], { workers: 0, functions: 0 });
    t += 150;
    expect(rollback.onDisconnected(1001)).toBe(true);
    expect(qc.getQueryData(['functions', 'list'])).toEqual(['orders::create']);
    expect(qc.getQueryData(['workers', 'list'])).toEqual(['orders']);
    expect(qc.getQueryData(['functions', 'dashboard-snapshot'])).toEqual({ workers: 1, functions: 1 });
  });
});
