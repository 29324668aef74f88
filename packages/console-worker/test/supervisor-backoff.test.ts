import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import type { Logger } from '../../engine/src/log.ts';
import { Supervisor } from '../../engine/src/supervisor/supervisor.ts';

// issue 7 §6: "restarts it with backoff if it crashes". A worker that keeps crashing is relaunched
// after 0.5 s, then 1 s, 2 s, 4 s, … doubling up to a 30 s cap; a run that stayed up past 30 s
// starts the sequence again from 0.5 s.

/** A worker that prints when it started and crashes at once (exit code 3). */
function crasherScript(dir: string, extra = ''): string {
  const file = join(dir, 'crash.mjs');
  writeFileSync(file, `${extra}{\n  console.log('launched ' + Date.now());\n  process.exit(3);\n}\n`);
  return file;
}

interface SupState {
  name: string;
  pid: number | null;
  running: boolean;
  restarts: number;
  lastExit: { code: number | null; signal: string | null; atMs: number } | null;
  startedAtMs: number | null;
  logFile: string;
}

describe('supervisor restart backoff, through a real engine', () => {
  let engine: EngineProcess | undefined;
  let client: RawClient | undefined;
  afterEach(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  it('relaunches a crashing worker after 0.5 s, 1 s, 2 s and 4 s (engine::supervisor::list and the engine log agree)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-backoff-'));
    const script = crasherScript(dir);
    engine = await startEngine({
      configYaml: [
        'workers:',
        '  - name: eng-worker-manager',
        '    config:',
        '      port: {{BUS_PORT}}',
        '  - name: crasher',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(script)}]`,
        '',
      ].join('\n'),
      env: { ENG_LOG_LEVEL: 'info' },
    });
    client = await RawClient.worker(engine.busUrl);

    // sample the supervisor often: every exit time and every launch time stays visible for ≥ 0.5 s
    const exits = new Map<number, number>(); // restarts count after the exit → lastExit.atMs
    const starts = new Set<number>();
    let last: SupState | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const { workers } = (await client.result('engine::supervisor::list', {})) as { workers: SupState[] };
      const state = workers.find((w) => w.name === 'crasher');
      if (state) {
        last = state;
        if (state.startedAtMs !== null) starts.add(state.startedAtMs);
        if (state.lastExit) exits.set(state.restarts, state.lastExit.atMs);
        // five launches = four waits (0.5 + 1 + 2 + 4 s)
        if (starts.size >= 5 && exits.size >= 4) break;
      }
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(last?.lastExit).toMatchObject({ code: 3, signal: null });
    const startList = [...starts].sort((a, b) => a - b);
    const exitList = [...exits.entries()].sort((a, b) => a[0] - b[0]).map(([, at]) => at);
    expect(startList.length).toBeGreaterThanOrEqual(5);
    expect(exitList.length).toBeGreaterThanOrEqual(4);
    // wait i = next launch − exit i, on the engine's own clock
    const waits = [0, 1, 2, 3].map((i) => (startList[i + 1] as number) - (exitList[i] as number));
    const expected = [500, 1000, 2000, 4000];
    console.log(`[backoff] measured waits between exit and relaunch: ${waits.join(', ')} ms`);
    waits.forEach((wait, i) => {
      expect(wait, `wait ${i} was ${wait} ms`).toBeGreaterThanOrEqual((expected[i] as number) - 5);
      expect(wait, `wait ${i} was ${wait} ms`).toBeLessThan((expected[i] as number) + 400);
    });
    // each exit follows its launch: the waits are not launch-to-launch gaps in disguise
    for (let i = 0; i < 4; i++) expect(exitList[i] as number).toBeGreaterThanOrEqual(startList[i] as number);

    // the engine log says the same, in order, one line per crash
    const lines = engine
      .logs()
      .split('\n')
      .filter((l) => l.includes(':crasher] exited (code 3); restarting in'));
    const announced = lines.map((l) => Number(/restarting in (\d+) ms/.exec(l)?.[1]));
    expect(announced.slice(0, 4)).toEqual([500, 1000, 2000, 4000]);
    // and its timestamps are as far apart as the waits plus the (short) lives in between
    const at = lines.map((l) => Date.parse(l.slice(0, 24)));
    for (let i = 0; i < 3; i++) expect((at[i + 1] as number) - (at[i] as number)).toBeGreaterThanOrEqual(expected[i] as number);

    // every launch is in the worker's log file, each with the crasher's own line
    const logFile = last?.logFile as string;
    await waitFor(() => (readFileSync(logFile, 'utf8').match(/^launched \d+$/gm)?.length ?? 0) >= 5, 5000);
    expect(readFileSync(logFile, 'utf8').match(/^--- .* starting /gm)?.length).toBeGreaterThanOrEqual(5);
  }, 40_000);
});

describe('supervisor restart backoff, cap and reset (fake clock)', () => {
  const realSetTimeout = globalThis.setTimeout;
  const tick = () => new Promise((r) => realSetTimeout(r, 20));
  let supervisor: Supervisor | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await supervisor?.stop();
    supervisor = undefined;
  });

  it('doubles from 0.5 s to a 30 s cap, stays there, and starts over after a run longer than 30 s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-backoff-cap-'));
    const marker = join(dir, 'stay-up');
    // with the marker present the worker stays up (until killed) instead of crashing
    const script = crasherScript(
      dir,
      `import { existsSync } from 'node:fs';\nif (existsSync(${JSON.stringify(marker)})) { console.log('staying up'); setInterval(() => {}, 1000); } else `,
    );
    const warnings: string[] = [];
    const log = {
      child: () => log,
      debug: () => undefined,
      info: () => undefined,
      warn: (m: string) => warnings.push(m),
      error: (m: string) => warnings.push(`error: ${m}`),
    } as unknown as Logger;
    // only timers and the clock are fake: the child processes and their exits are real
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    supervisor = new Supervisor({
      busUrl: 'ws://127.0.0.1:9',
      logDir: join(dir, 'logs'),
      configDir: dir,
      log,
      resolver: () => ({ spec: { command: process.execPath, args: [script], cwd: dir } }),
    });
    supervisor.start([{ name: 'crasher' }]);
    const state = () => supervisor?.states()[0];
    const waitUntil = async (ok: () => boolean, what: string) => {
      for (let i = 0; i < 500 && !ok(); i++) await tick();
      if (!ok()) throw new Error(`${what} did not happen; warnings: ${warnings.join(' | ')}`);
    };
    const announced = () => warnings.map((w) => Number(/restarting in (\d+) ms/.exec(w)?.[1]));

    // nine crashes: 0.5, 1, 2, 4, 8, 16 s, then 30 s (not 32) and 30 s again
    const expected = [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000];
    for (let i = 0; i < expected.length; i++) {
      await waitUntil(() => warnings.length === i + 1, `crash ${i + 1}`);
      expect(state()?.restarts).toBe(i + 1);
      expect(state()?.running).toBe(false);
      const delay = expected[i] as number;
      // one millisecond short of the delay: still waiting, no new process
      vi.advanceTimersByTime(delay - 1);
      await tick();
      expect(state()?.pid, `relaunched before ${delay} ms`).toBeNull();
      if (i === expected.length - 1) writeFileSync(marker, '1');
      vi.advanceTimersByTime(1);
      await waitUntil(() => (state()?.pid ?? null) !== null || warnings.length > i + 1, `relaunch ${i + 1}`);
    }
    expect(announced()).toEqual(expected);

    // the last launch stays up; 31 s later (fake clock) it dies: the backoff starts over at 0.5 s
    await waitUntil(() => readFileSync(join(dir, 'logs', 'crasher.log'), 'utf8').includes('staying up'), 'a long run');
    expect(state()?.running).toBe(true);
    vi.advanceTimersByTime(31_000);
    process.kill(state()?.pid as number, 'SIGKILL');
    await waitUntil(() => warnings.length === expected.length + 1, 'the crash after a long run');
    expect(warnings.at(-1)).toContain('exited (SIGKILL); restarting in 500 ms');
    expect(existsSync(join(dir, 'logs', 'crasher.log'))).toBe(true);
  }, 60_000);
});
