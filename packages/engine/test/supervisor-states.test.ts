import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, engArgs, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import type { SupervisedState } from '../src/supervisor/supervisor.ts';

/**
 * What `engine::supervisor::list` tells the console's Workers page (issue 19 §8): configured
 * workers that cannot be launched (unknown entry, missing binary) with the reason, a crash loop
 * with its restart count, last exit and log file, and the engine's HTTP/streams URLs handed to
 * every worker it launches.
 */
describe('supervisor: the states engine::supervisor::list reports', () => {
  let engine: EngineProcess;
  let client: RawClient;
  const list = async () => ((await client.result('engine::supervisor::list')) as { workers: SupervisedState[] }).workers;
  const one = async (name: string) => (await list()).find((w) => w.name === name);

  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: [
        '  - name: eng-http',
        '    config:',
        '      port: {{HTTP_PORT}}',
        '  - name: eng-stream',
        '    config:',
        '      port: {{STREAMS_PORT}}',
        '  - name: not-a-known-worker',
        '  - name: missing-binary',
        '    command: /nonexistent/bin/worker',
        '  - name: crasher',
        `    command: ${process.execPath}`,
        '    args: ["-e", "console.log(\'crasher: http=\' + process.env.ENG_HTTP_URL + \' streams=\' + process.env.ENG_STREAMS_URL); process.exit(3)"]',
      ].join('\n'),
    });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  it('lists an entry the engine cannot resolve as failed to launch, with the reason and no log file', async () => {
    expect(await one('not-a-known-worker')).toMatchObject({
      status: 'failed_to_launch',
      running: false,
      pid: null,
      restarts: 0,
      logFile: null,
      command: null,
      error: expect.stringContaining('not a known worker'),
    });
  });

  it('lists a command that cannot be executed as failed to launch, retried with backoff', async () => {
    const state = await waitFor(async () => {
      const s = await one('missing-binary');
      return s && s.restarts >= 1 ? s : undefined;
    }, 10_000);
    expect(state).toMatchObject({ status: 'failed_to_launch', running: false, pid: null, command: '/nonexistent/bin/worker' });
    expect(state.error).toContain('ENOENT');
    expect(state.lastExit).not.toBeNull();
    expect(state.logFile).toMatch(/missing-binary\.log$/);
    expect(readFileSync(state.logFile as string, 'utf8')).toContain('ENOENT');
    // the next attempt is scheduled, not forgotten
    expect(state.nextRestartAtMs).toBeGreaterThan(Date.now() - 1000);
  });

  it('reports a worker that keeps exiting as a crash loop: restarts, last exit code, log file', async () => {
    const state = await waitFor(async () => {
      const s = await one('crasher');
      return s && s.status === 'crash_loop' ? s : undefined;
    }, 20_000);
    expect(state.restarts).toBeGreaterThanOrEqual(3);
    expect(state.quickExits).toBeGreaterThanOrEqual(3);
    expect(state.lastExit).toMatchObject({ code: 3, signal: null });
    expect(state.command).toContain(process.execPath);
    expect(state.error).toBeNull();
    expect(existsSync(state.logFile as string)).toBe(true);
    expect(engine.logs()).toMatch(/crash loop: \d+ quick exits in a row/);
  });

  it('hands the engine HTTP and streams URLs to the workers it launches', async () => {
    const state = await one('crasher');
    const log = readFileSync(state?.logFile as string, 'utf8');
    expect(log).toContain(`crasher: http=http://127.0.0.1:${engine.ports.HTTP} streams=ws://127.0.0.1:${engine.ports.STREAMS}`);
  });

  it('eng worker list says which configured workers fail to launch or crash-loop, and why', async () => {
    await waitFor(async () => (await one('crasher'))?.status === 'crash_loop', 20_000);
    const run = (args: string[]) =>
      spawnSync(process.execPath, engArgs(['worker', 'list', '-c', engine.configPath, ...args]), {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      });
    const json = JSON.parse(run(['--json']).stdout) as { workers: Array<{ name: string; status?: string; error?: string }> };
    expect(json.workers.find((w) => w.name === 'missing-binary')).toMatchObject({
      status: 'failed_to_launch',
      error: expect.stringContaining('ENOENT'),
    });
    expect(json.workers.find((w) => w.name === 'crasher')).toMatchObject({ status: 'crash_loop' });
    const text = run([]).stdout;
    expect(text).toMatch(/missing-binary\s+worker\s+failed\s+failed to launch \/nonexistent\/bin\/worker: ENOENT/);
    expect(text).toMatch(/not-a-known-worker\s+worker\s+failed\s+no command given/);
    expect(text).toMatch(/crasher\s+worker\s+(crash loop|running)/);
  });
});
