import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { reasonOf, StderrTail, secretScrubber } from '../src/supervisor/stderr-tail.ts';
import type { SupervisedState } from '../src/supervisor/supervisor.ts';

/**
 * Issue 25 item 12: a crashing worker's log line names it and says why, and
 * `engine::supervisor::list` carries the last lines of its stderr (redacted), so the Workers page
 * can show the reason instead of only a log file path.
 */
describe('supervisor: why a worker crashed', () => {
  const WORKER_KEY = 'sk-billing-0123456789';
  const ENGINE_KEY = 'sk-engine-abcdef0123';
  let engine: EngineProcess;
  let client: RawClient;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-stderr-'));
    const script = join(dir, 'billing.mjs');
    writeFileSync(
      script,
      [
        "console.log('billing: starting');",
        "console.error('db: connecting to postgres://admin:hunter2-pw@db.internal/orders');",
        "console.error('billing: token ' + process.env.BILLING_TOKEN + ', engine key ' + process.env.OPENAI_API_KEY);",
        "throw new Error('billing: upstream refused the connection');",
      ].join('\n'),
    );
    engine = await startEngine({
      workersYaml: [
        '  - name: billing',
        `    command: ${process.execPath}`,
        `    args: ["${script}"]`,
        '    env:',
        `      BILLING_TOKEN: ${WORKER_KEY}`,
      ].join('\n'),
      env: { OPENAI_API_KEY: ENGINE_KEY, ENG_LOG_LEVEL: 'info' },
    });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  it('logs the exit with the worker named and the reason it printed', async () => {
    const line = await waitFor(
      () =>
        engine
          .logs()
          .split('\n')
          .find((l) => l.includes('exited (code 1)')),
      15_000,
    );
    expect(line).toMatch(
      /exited \(code 1\); restarting in \d+ ms — worker "billing": Error: billing: upstream refused the connection \(log: /,
    );
  });

  it('reports the last stderr lines in engine::supervisor::list, credentials redacted', async () => {
    const state = await waitFor(async () => {
      const { workers } = (await client.result('engine::supervisor::list')) as { workers: SupervisedState[] };
      const billing = workers.find((w) => w.name === 'billing');
      return billing?.stderrTail.some((l) => l.includes('upstream refused')) ? billing : undefined;
    }, 15_000);
    const tail = state.stderrTail.join('\n');
    expect(tail).toContain('db: connecting to postgres://db.internal/orders');
    expect(tail).toContain('Error: billing: upstream refused the connection');
    expect(tail).toContain('billing: token [REDACTED], engine key [REDACTED]');
    for (const secret of ['hunter2-pw', 'admin:', WORKER_KEY, ENGINE_KEY]) expect(tail).not.toContain(secret);
    // stdout is the log file's, not the reason
    expect(tail).not.toContain('billing: starting');
    expect(state.stderrTail.length).toBeLessThanOrEqual(20);
  });
});

describe('StderrTail', () => {
  it('keeps the latest run that wrote anything, bounded in lines and characters, lines joined across chunks', () => {
    const tail = new StderrTail(secretScrubber(() => ['s3cret-value']));
    tail.startRun();
    tail.write('first run\n');
    tail.startRun();
    // the new run has printed nothing yet: the previous reason stays
    expect(tail.snapshot()).toEqual(['first run']);
    tail.write('par');
    tail.write('tial s3cret-value\n\u001b[31mred\u001b[0m\r\n\n');
    for (let i = 0; i < 30; i++) tail.write(`line ${i}\n`);
    tail.write('x'.repeat(1000));
    tail.flush();
    const lines = tail.snapshot();
    expect(lines).toHaveLength(20);
    expect(lines.at(-1)).toBe(`${'x'.repeat(400)}…`);
    expect(lines).not.toContain('first run');

    const short = new StderrTail(secretScrubber(() => ['s3cret-value']));
    short.write('par');
    short.write('tial s3cret-value\n\u001b[31mred\u001b[0m\r\n');
    short.write('no newline at the end');
    short.flush();
    expect(short.snapshot()).toEqual(['partial [REDACTED]', 'red', 'no newline at the end']);
  });

  it('picks the line that says why from a Node crash', () => {
    const crash = [
      'file:///srv/worker.mjs:4',
      "throw new Error('boom');",
      '^',
      'Error: billing: upstream refused',
      '    at file:///srv/worker.mjs:4:7',
      '    at ModuleJob.run (node:internal/modules/esm/module_job:234:25)',
      'Node.js v20.20.2',
    ];
    expect(reasonOf(crash)).toBe('Error: billing: upstream refused');
    expect(reasonOf(['listening', 'shutting down'])).toBe('shutting down');
    expect(reasonOf([])).toBeUndefined();
  });
});
