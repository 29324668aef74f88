/**
 * eng-cron against real engines with iii-sdk 0.22.1 and @eng/sdk workers: firing, payload,
 * the Rust-cron dialect (seconds first, 1 = Sunday, no 5-field lines), trigger_now, next_runs,
 * conditions, no replay of missed ticks, and the redis lock with two engines.
 * spec: engine-protocol §5.3, §7.2, §11 item 10.
 */
import { connect, type EngClient } from '@eng/sdk';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';

type IiiWorker = ReturnType<typeof registerWorker>;
interface CronPayload {
  trigger: string;
  job_id: string;
  scheduled_time: string;
  actual_time: string;
  manual?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?\+00:00$/;

function iiiWorker(url: string, name: string): IiiWorker {
  return registerWorker(url, {
    workerName: name,
    otel: { enabled: false },
    enableMetricsReporting: false,
    reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 300 },
  } as never);
}

let engine: EngineProcess;
let raw: RawClient;
let eng: EngClient;

beforeAll(async () => {
  engine = await startEngine({ workersYaml: '  - name: iii-cron\n' });
  raw = await RawClient.worker(engine.busUrl);
  eng = connect(engine.busUrl, { name: 'cron-eng' });
  await eng.ready();
});
afterAll(async () => {
  await eng?.close();
  await raw?.terminate();
  await engine?.stop();
});

describe('cron trigger: firing', () => {
  it('fires an every-second expression about once per second with the §5.3 payload and trigger metadata', async () => {
    const fired: Array<{ payload: CronPayload; metadata: unknown; at: number }> = [];
    eng.registerFunction('tick::every', (payload, ctx) => {
      fired.push({ payload: payload as CronPayload, metadata: ctx.metadata, at: Date.now() });
      return null;
    });
    const trigger = eng.registerTrigger({
      type: 'cron',
      function_id: 'tick::every',
      config: { expression: '* * * * * *' },
      metadata: { job: 'm' },
    });
    await waitFor(() => fired.length >= 1, 3000);
    const start = fired.length;
    await sleep(3100);
    trigger.unregister();
    const count = fired.length - start;
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThanOrEqual(4);

    for (const { payload, metadata } of fired) {
      expect(Object.keys(payload).sort()).toEqual(['actual_time', 'job_id', 'scheduled_time', 'trigger']);
      expect(payload.trigger).toBe('cron');
      expect(payload.job_id).toBe(trigger.id);
      expect(payload.scheduled_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
      expect(payload.actual_time).toMatch(RFC3339_UTC);
      const lag = Date.parse(payload.actual_time) - Date.parse(payload.scheduled_time);
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(1000);
      expect(metadata).toEqual({ job: 'm' });
    }
    const seconds = fired.map((f) => Date.parse(f.payload.scheduled_time) / 1000);
    for (let i = 1; i < seconds.length; i++) expect(seconds[i]! - seconds[i - 1]!).toBe(1);

    // unregistered: no more firings
    const after = fired.length;
    await sleep(1500);
    expect(fired.length).toBe(after);
  });

  it('fires for an iii-sdk 0.22.1 worker, whose job_id is the binding id', async () => {
    const iii = iiiWorker(engine.busUrl, 'cron-iii');
    const fired: Array<{ payload: CronPayload; metadata: unknown }> = [];
    iii.registerFunction('tick::iii', async (payload: CronPayload, metadata?: unknown) => {
      fired.push({ payload, metadata });
    });
    iii.registerTrigger({ type: 'cron', function_id: 'tick::iii', config: { expression: '*/1 * * * * * *' }, metadata: { from: 'iii' } });
    try {
      await waitFor(() => fired.length >= 2, 4000);
      const listed = await raw.result('engine::registered-triggers::list', { function_id: 'tick::iii' });
      const ids = JSON.stringify(listed);
      expect(ids).toContain(fired[0]!.payload.job_id);
      expect(fired[0]!.metadata).toEqual({ from: 'iii' });
    } finally {
      await iii.shutdown();
    }
  });

  it('honours condition_function_id: only a literal false skips', async () => {
    const checked: CronPayload[] = [];
    const ran: CronPayload[] = [];
    let verdict: unknown = false;
    eng.registerFunction('cond::cron', (payload) => {
      checked.push(payload as CronPayload);
      return verdict;
    });
    eng.registerFunction('tick::guarded', (payload) => {
      ran.push(payload as CronPayload);
      return null;
    });
    const trigger = eng.registerTrigger({
      type: 'cron',
      function_id: 'tick::guarded',
      config: { expression: '* * * * * *', condition_function_id: 'cond::cron' },
    });
    try {
      await waitFor(() => checked.length >= 2, 4000);
      expect(ran).toEqual([]);
      expect(checked[0]).toMatchObject({ trigger: 'cron', job_id: trigger.id });
      verdict = null; // no result proceeds
      await waitFor(() => ran.length >= 1, 3000);
      expect(ran[0]?.job_id).toBe(trigger.id);
    } finally {
      trigger.unregister();
    }
  });

  it('does not replay ticks missed while the engine was down', async () => {
    const own = await startEngine({ workersYaml: '  - name: eng-cron\n' });
    const iii = iiiWorker(own.busUrl, 'cron-restart');
    const fired: CronPayload[] = [];
    iii.registerFunction('tick::restart', async (payload: CronPayload) => {
      fired.push(payload);
    });
    iii.registerTrigger({ type: 'cron', function_id: 'tick::restart', config: { expression: '* * * * * *' } });
    try {
      await waitFor(() => fired.length >= 1, 3000);
      await own.stop();
      const downAt = Date.now();
      await sleep(3000);
      fired.length = 0;
      await own.restart();
      const upAt = Date.now();
      // the SDK reconnects and replays its binding; only new ticks fire
      await waitFor(() => fired.length >= 1, 8000);
      await sleep(1200);
      for (const payload of fired) expect(Date.parse(payload.scheduled_time)).toBeGreaterThanOrEqual(Math.floor(upAt / 1000) * 1000);
      expect(fired.length).toBeLessThanOrEqual(4);
      expect(downAt).toBeLessThan(upAt);
    } finally {
      await iii.shutdown();
      await own.stop();
    }
  });
});

describe('cron trigger: expressions', () => {
  const nextRuns = (input: unknown) => raw.call('eng::cron::next_runs', input);

  it('reads day-of-week 1–7 with 1 = Sunday (and names), in UTC', async () => {
    const sundays = (await raw.result('eng::cron::next_runs', { expression: '0 0 0 * * 1', count: 3 })) as { next_runs: string[] };
    expect(sundays.next_runs).toHaveLength(3);
    for (const time of sundays.next_runs) {
      expect(time).toMatch(/T00:00:00\+00:00$/);
      expect(new Date(time).getUTCDay()).toBe(0);
    }
    const saturdays = (await raw.result('eng::cron::next_runs', { expression: '0 0 0 * * 7' })) as { next_runs: string[] };
    expect(saturdays.next_runs).toHaveLength(5);
    for (const time of saturdays.next_runs) expect(new Date(time).getUTCDay()).toBe(6);
    const named = (await raw.result('eng::cron::next_runs', { expression: '0 0 0 * * SUN', count: 2 })) as { next_runs: string[] };
    expect(named.next_runs).toEqual(sundays.next_runs.slice(0, 2));
  });

  it('accepts ?, a year field and the @ shorthands', async () => {
    const mondays = (await raw.result('eng::cron::next_runs', { expression: '0 30 9 ? * 2', count: 2 })) as { next_runs: string[] };
    for (const time of mondays.next_runs) {
      expect(time).toMatch(/T09:30:00\+00:00$/);
      expect(new Date(time).getUTCDay()).toBe(1);
    }
    const year = (await raw.result('eng::cron::next_runs', { expression: '0 0 12 1 1 ? 2099' })) as { next_runs: string[] };
    expect(year.next_runs).toEqual(['2099-01-01T12:00:00+00:00']);
    const hourly = (await raw.result('eng::cron::next_runs', { expression: '@hourly', count: 2 })) as { next_runs: string[] };
    for (const time of hourly.next_runs) expect(time).toMatch(/:00:00\+00:00$/);
    const weekly = (await raw.result('eng::cron::next_runs', { expression: '@weekly', count: 1 })) as { next_runs: string[] };
    expect(new Date(weekly.next_runs[0]!).getUTCDay()).toBe(0);
    const daily = (await raw.result('eng::cron::next_runs', { expression: '@daily', count: 1 })) as { next_runs: string[] };
    expect(daily.next_runs[0]).toMatch(/T00:00:00\+00:00$/);
  });

  it('rejects a 5-field expression at bind time, quoting it, and lists the binding as Error with the reason', async () => {
    raw.send({ type: 'registerfunction', id: 'raw::cron' });
    raw.send({
      type: 'registertrigger',
      id: 'five-fields',
      trigger_type: 'cron',
      function_id: 'raw::cron',
      config: { expression: '*/5 * * * *' },
    });
    const refused = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === 'five-fields');
    expect(refused.error).toEqual({
      code: 'trigger_registration_failed',
      message: 'invalid cron expression "*/5 * * * *": expected 6 or 7 fields (sec min hour day-of-month month day-of-week [year]), got 5',
    });
    for (const [id, config, quoted] of [
      ['bad-dow', { expression: '0 0 0 * * 0' }, '"0 0 0 * * 0"'],
      ['bad-sec', { expression: '61 * * * * *' }, '"61 * * * * *"'],
      ['bad-nick', { expression: '@often' }, '"@often"'],
      ['no-expr', {}, 'expression is required'],
      ['num-expr', { expression: 5 }, 'expression is required'],
    ] as const) {
      raw.send({ type: 'registertrigger', id, trigger_type: 'cron', function_id: 'raw::cron', config });
      const frame = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === id);
      expect((frame.error as { message: string }).message).toContain(quoted);
    }
    const listed = await raw.result<{ registered_triggers: Array<{ id: string; status: string; error?: string }> }>(
      'engine::registered-triggers::list',
      { trigger_type: 'cron' },
    );
    const errored = listed.registered_triggers.filter((t) => /five-fields|bad-|no-expr|num-expr/.test(t.id));
    expect(errored).toHaveLength(6);
    expect(errored.every((t) => t.status === 'error' && (t.error ?? '').length > 0)).toBe(true);
    expect(errored.find((t) => t.id === 'five-fields')?.error).toContain('expected 6 or 7 fields');
  });

  it('next_runs refuses bad input with clear codes', async () => {
    expect((await nextRuns({ expression: '* * * * *' })).error).toEqual({
      code: 'INVALID_ARGUMENTS',
      message: 'invalid cron expression "* * * * *": expected 6 or 7 fields (sec min hour day-of-month month day-of-week [year]), got 5',
    });
    expect((await nextRuns({})).error).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('expression or trigger_id is required'),
    });
    expect((await nextRuns({ expression: '* * * * * *', count: 0 })).error).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('count'),
    });
    expect((await nextRuns({ expression: 7 })).error).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('expression'),
    });
    expect((await nextRuns({ trigger_id: 'nope' })).error).toEqual({ code: 'NOT_FOUND', message: 'cron trigger nope not found' });
  });
});

describe('cron trigger: trigger_now and next_runs of a binding', () => {
  it('fires a binding immediately with manual: true, and lists its next runs', async () => {
    const fired: CronPayload[] = [];
    eng.registerFunction('tick::yearly', (payload) => {
      fired.push(payload as CronPayload);
      return null;
    });
    const trigger = eng.registerTrigger({ type: 'cron', function_id: 'tick::yearly', config: { expression: '0 0 0 1 1 *' } });
    await waitFor(async () => !(await raw.call('eng::cron::next_runs', { trigger_id: trigger.id })).error);

    const runs = (await raw.result('eng::cron::next_runs', { trigger_id: trigger.id, count: 2 })) as {
      expression: string;
      next_runs: string[];
    };
    expect(runs.expression).toBe('0 0 0 1 1 *');
    expect(runs.next_runs).toHaveLength(2);
    for (const time of runs.next_runs) expect(time).toMatch(/-01-01T00:00:00\+00:00$/);

    const answer = (await raw.result('eng::cron::trigger_now', { trigger_id: trigger.id })) as CronPayload & { function_id: string };
    expect(answer).toMatchObject({ trigger: 'cron', job_id: trigger.id, manual: true, function_id: 'tick::yearly' });
    await waitFor(() => fired.length === 1);
    expect(fired[0]).toEqual({
      trigger: 'cron',
      job_id: trigger.id,
      scheduled_time: expect.stringMatching(RFC3339_UTC),
      actual_time: expect.stringMatching(RFC3339_UTC),
      manual: true,
    });
    trigger.unregister();
  });

  it('refuses unknown or missing trigger ids', async () => {
    expect((await raw.call('eng::cron::trigger_now', { trigger_id: 'missing' })).error).toEqual({
      code: 'NOT_FOUND',
      message: 'cron trigger missing not found',
    });
    expect((await raw.call('eng::cron::trigger_now', {})).error).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('trigger_id'),
    });
    expect((await raw.call('eng::cron::trigger_now', { trigger_id: 12 })).error).toMatchObject({ code: 'deserialization_error' });
  });
});

describe('cron, redis adapter: two engines on one redis', () => {
  let redis: RedisProcess;
  let one: EngineProcess;
  let two: EngineProcess;

  beforeAll(async () => {
    redis = await startRedis();
    const yaml = `  - name: eng-cron\n    config:\n      adapter:\n        name: redis\n        config:\n          redis_url: ${redis.url}\n`;
    [one, two] = await Promise.all([startEngine({ workersYaml: yaml }), startEngine({ workersYaml: yaml })]);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await redis?.stop();
  });

  it('fires each tick of the same job on one engine only', async () => {
    const seen: Array<{ engine: string; scheduled: string }> = [];
    const workers = [
      { name: 'one', client: connect(one.busUrl, { name: 'cron-one' }) },
      { name: 'two', client: connect(two.busUrl, { name: 'cron-two' }) },
    ];
    for (const { name, client } of workers) {
      client.registerFunction('shared::tick', (payload) => {
        seen.push({ engine: name, scheduled: (payload as CronPayload).scheduled_time });
        return null;
      });
      client.registerTrigger({ type: 'cron', function_id: 'shared::tick', config: { expression: '* * * * * *' } });
    }
    try {
      await Promise.all(workers.map((w) => w.client.ready()));
      await waitFor(() => seen.length >= 3, 6000);
      await sleep(1000);
      const ticks = seen.map((s) => s.scheduled);
      expect(new Set(ticks).size).toBe(ticks.length);
    } finally {
      await Promise.all(workers.map((w) => w.client.close()));
    }
  });
});
