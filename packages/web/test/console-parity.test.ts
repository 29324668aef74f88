import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../src/api/client.ts';
import type { ConsoleConfig } from '../src/api/console-config.ts';
import { serverKindOf } from '../src/api/console-config.ts';
import { FIRST_CONNECT_GRACE_MS, isEngineDown, staleLabel } from '../src/api/outage.ts';
import { consumersOf, type QueueTopic, type TopicStats } from '../src/api/queues.ts';
import { BURST_MS, createShutdownRollback } from '../src/api/shutdown-rollback.ts';
import { describeExit, statusOf } from '../src/api/supervisor.ts';
import { commandLineOf, flagsFor } from '../src/lib/console-flags.ts';
import { countOf, pluralize } from '../src/lib/format.ts';
import { allShortcuts } from '../src/lib/keyboard.ts';
import { NUMBER_JUMPS, PAGES } from '../src/pages.ts';

// issue 19: the pure parts of items 1 (which flags a message names), 5 (stale marker), 8 (supervisor
// states) and 11 (plurals, consumers apart, shortcuts documented)

describe('stale marker (issue 19 §5)', () => {
  const at = new Date(2026, 10, 24, 12, 3, 4).getTime();
  it('says as of when the data was received, and that the engine is unreachable', () => {
    expect(staleLabel(at)).toBe('as of 12:03:04, engine unreachable');
    expect(staleLabel(at, () => 'noon')).toBe('as of noon, engine unreachable');
  });
  it('says so when no data ever arrived', () => {
    expect(staleLabel(0)).toBe('engine unreachable, no data yet');
  });
  it('counts the engine down once the first connection had its grace period, and while reconnecting', () => {
    const base: ConnectionState = { status: 'connecting', url: 'ws://x/ws', since: 1000, attempt: 0 };
    expect(isEngineDown(base, 1000 + FIRST_CONNECT_GRACE_MS - 1)).toBe(false);
    expect(isEngineDown(base, 1000 + FIRST_CONNECT_GRACE_MS + 1)).toBe(true);
    expect(isEngineDown({ ...base, status: 'reconnecting' }, 1001)).toBe(true);
    expect(isEngineDown({ ...base, status: 'failed' }, 1001)).toBe(true);
    expect(isEngineDown({ ...base, status: 'open' }, 99_999)).toBe(false);
  });
});

describe('plurals (issue 19 §11)', () => {
  it('agree with the count', () => {
    expect(pluralize(1, 'dead letter')).toBe('1 dead letter');
    expect(pluralize(0, 'dead letter')).toBe('0 dead letters');
    expect(pluralize(2, 'child', 'children')).toBe('2 children');
    expect(countOf(1, 'call')).toBe('1 call');
    expect(countOf(1500, 'call')).toBe('1.5k calls');
    expect(countOf(0, 'dead letter')).toBe('0 dead letters');
  });
});

describe('consumers apart (issue 19 §11)', () => {
  const topic = (kinds: QueueTopic['kinds']): QueueTopic => ({ name: 'fulfilment', kinds, depth: 0, dlq_count: 0, subscriber_count: 1 });
  const stats = (consumer_count: number, active: boolean[]): TopicStats => ({
    topic: 'fulfilment',
    depth: 0,
    in_flight: 0,
    delivered: 0,
    failed: 0,
    dlq_depth: 0,
    dlq_count: 0,
    consumer_count,
    config: null,
    subscribers: active.map((a, i) => ({ function_id: `f${i}`, active: a, dormant_since: null, in_flight: 0 })),
  });
  it('splits the engine’s consumer_count into bound subscribers and a function queue’s concurrency', () => {
    // the orders demo's fulfilment: a function queue with concurrency 10 and a topic with one subscriber
    expect(consumersOf(topic(['function_queue', 'topic']), stats(11, [true]))).toEqual({ subscribers: 1, concurrency: 10 });
    // a dormant subscriber is not counted by the engine either
    expect(consumersOf(topic(['function_queue', 'topic']), stats(11, [true, false]))).toEqual({ subscribers: 1, concurrency: 10 });
    // a topic has no concurrency of its own
    expect(consumersOf(topic(['topic']), stats(2, [true, true]))).toEqual({ subscribers: 2, concurrency: undefined });
    // before its stats arrive, the listed subscriber count
    expect(consumersOf(topic(['topic']), undefined)).toEqual({ subscribers: 1, concurrency: undefined });
  });
});

describe('supervised workers (issue 19 §8)', () => {
  const base = { name: 'w', pid: null, running: false, restarts: 0, lastExit: null, logFile: null, startedAtMs: null, url: null };
  it('describe the last exit and take a state from engines that report only running', () => {
    expect(describeExit(null)).toBe('—');
    expect(describeExit({ code: 3, signal: null, atMs: 0 })).toBe('code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL', atMs: 0 })).toBe('SIGKILL');
    expect(describeExit({ code: null, signal: null, atMs: 0 })).toBe('could not start');
    expect(statusOf({ ...base, status: 'crash_loop' })).toBe('crash_loop');
    expect(statusOf({ ...base, running: true })).toBe('running');
    expect(statusOf(base)).toBe('restarting');
  });
});

describe('messages name the serving console’s own flags (issue 19 §1)', () => {
  const engConsole: ConsoleConfig = {
    version: '0.1.0',
    host: '127.0.0.1',
    port: 3114,
    engine_host: '127.0.0.1',
    engine_port: 3111,
    ws_port: 3112,
    bridge_port: 49134,
    otel: { enabled: false, service_name: 'eng-console' },
    enable_flow: false,
    engine_urls: { http: 'http://127.0.0.1:3111', streams: 'ws://127.0.0.1:3112', bridge: 'ws://127.0.0.1:49134' },
  };
  const worker: ConsoleConfig = {
    ...engConsole,
    server: 'console-worker',
    port: 3113,
    engine_urls: { http: 'http://127.0.0.1:4111', streams: 'ws://127.0.0.1:3112', bridge: 'ws://127.0.0.1:5000' },
    enable_flow: true,
    sources: { engine_http_url: 'flag', engine_streams_url: 'engine', enable_flow: 'config file' },
  };

  it('tells the two servers apart by their /_console/config', () => {
    expect(serverKindOf({ available: true, config: worker })).toBe('console-worker');
    expect(serverKindOf({ available: true, config: engConsole })).toBe('eng-console');
    expect(serverKindOf({ available: false, reason: 'HTTP 404' })).toBe('unknown');
  });

  it('the console worker’s: --url and its config keys, never --engine-host or --bridge-port', () => {
    const flags = flagsFor('console-worker');
    expect(flags.bus).toEqual(['--url', 'ENG_URL']);
    expect(JSON.stringify(flags)).not.toMatch(/--engine-host|--bridge-port|--ws-port|--engine-port/);
    expect(flags.flow).toContain('enable_flow: true');
    expect(flagsFor('eng-console').bus).toEqual(['--engine-host', '--bridge-port']);
  });

  it('rebuilds the command line of each server', () => {
    expect(commandLineOf(engConsole)).toBe('eng-console -p 3114 --no-otel');
    // the streams URL came from the engine that launched it: no flag needed
    expect(commandLineOf(worker)).toBe(
      'eng-console-worker --http-port 3113 --url ws://127.0.0.1:5000 --engine-http-url http://127.0.0.1:4111 --enable-flow',
    );
  });
});

describe('the ? overlay documents every shortcut (issue 19 §11)', () => {
  it('lists ⌘/Ctrl + 1…9 and the g-key of every page', () => {
    const all = allShortcuts(PAGES, NUMBER_JUMPS);
    for (let d = 1; d <= 9; d++) expect(all.some((s) => s.keys === `mod+${d}`)).toBe(true);
    expect(all.find((s) => s.keys === 'mod+7')?.description).toBe('Jump to Dead letters');
    for (const page of PAGES) expect(all.some((s) => s.keys === `g ${page.key}` && s.description === `Go to ${page.label}`)).toBe(true);
    expect(new Set(all.map((s) => s.keys)).size).toBe(all.length);
  });
});

describe('shutdown rollback (issue 19 §5, npm start)', () => {
  const setup = () => {
    let t = 1_000_000;
    const qc = new QueryClient();
    const rollback = createShutdownRollback(qc, [['functions'], ['workers']], () => t);
    qc.setQueryData(['functions', 'list'], ['orders::create', 'orders::get']);
    qc.setQueryData(['workers', 'list'], ['orders']);
    // the engine stops its workers: a live event, then the refetch answers without them
    rollback.beforeLiveRefresh();
    qc.setQueryData(['functions', 'list'], []);
    qc.setQueryData(['workers', 'list'], []);
    return { qc, rollback, advance: (ms: number) => (t += ms) };
  };

  it('puts back what the lists showed before the departures when the engine closes the bus (1001)', () => {
    const { qc, rollback, advance } = setup();
    advance(800);
    expect(rollback.onDisconnected(1001)).toBe(true);
    expect(qc.getQueryData(['functions', 'list'])).toEqual(['orders::create', 'orders::get']);
    expect(qc.getQueryData(['workers', 'list'])).toEqual(['orders']);
  });

  it('keeps the new data for any other close, or when the departures were long before', () => {
    const dropped = setup();
    expect(dropped.rollback.onDisconnected(1006)).toBe(false);
    expect(dropped.qc.getQueryData(['functions', 'list'])).toEqual([]);
    const earlier = setup();
    earlier.advance(BURST_MS + 1);
    expect(earlier.rollback.onDisconnected(1001)).toBe(false);
    expect(earlier.qc.getQueryData(['workers', 'list'])).toEqual([]);
  });

  it('remembers the data from before the first event of a burst, not a later one', () => {
    const { qc, rollback, advance } = setup();
    advance(500);
    rollback.beforeLiveRefresh(); // a second worker leaves
    qc.setQueryData(['functions', 'list'], ['nothing']);
    advance(500);
    rollback.onDisconnected(1001);
    expect(qc.getQueryData(['functions', 'list'])).toEqual(['orders::create', 'orders::get']);
  });
});
