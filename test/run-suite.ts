/**
 * `npm test`: the whole suite, in three phases that always all run, then one summary.
 *
 *   1. Vitest (packages/* /test, test/): engines, workers, SDKs, MCP, chat stack, on loopback.
 *   2. Playwright, the `debian-chromium` project: the console in Chromium, three workers.
 *   3. Playwright, the `perf` project: the specs holding speed budgets, alone on the machine.
 *
 * What the phases share is built once first (the @eng/protocol and @eng/sdk dist/, the engine
 * bundle of test/engine-bundle.ts, the web UI), so parallel test files never race to build it.
 * At the end: the time of each phase, the 15 slowest files of both runners, and one closing line
 * `N passed, N failed`. The exit code is 0 only when every phase passed.
 *
 * Flags: --only vitest|e2e|perf (repeatable) runs just those phases; --overlap runs phases 1 and 2
 * at the same time (faster where there are more than two cores); --help.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { compileEntry } from '../packages/engine/scripts/compile.mjs';
import { ensureWebBuild } from '../packages/web/scripts/build.ts';
import { ensureEngineBundle } from './engine-bundle.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** TypeScript entries the tests run compiled (bins, chat roles, workers): [file, callMain]. */
const COMPILED_ENTRIES: Array<[string, boolean]> = [
  ['packages/mcp/src/main.ts', false],
  ['packages/console/src/cli.ts', true],
  ['packages/console-worker/src/main.ts', false],
  ['packages/worktree/src/main.ts', false],
  ['examples/orders/src/main.ts', false],
  ...['router', 'providers/openai', 'providers/anthropic', 'context', 'harness', 'session', 'approval'].map((role): [string, boolean] => [
    `packages/harness/src/${role}/worker.ts`,
    true,
  ]),
];
const PHASES = ['vitest', 'e2e', 'perf'] as const;
type Phase = (typeof PHASES)[number];

const USAGE = `Usage: npm test [-- --only vitest|e2e|perf] [-- --overlap]

Runs the whole suite: vitest, then the Playwright specs (three workers), then the Playwright specs
that hold speed budgets (one at a time). Prints the slowest files and "N passed, N failed".

  --only PHASE   run only this phase (vitest, e2e or perf); repeat for several
  --overlap      run vitest and the Playwright specs at the same time
  -h, --help     this text

One file: npx vitest run path/to/file.test.ts, or
          npx playwright test -c e2e/playwright.config.ts e2e/name.spec.ts`;

interface Options {
  phases: Phase[];
  overlap: boolean;
}

function parseArgs(argv: string[]): Options {
  const phases: Phase[] = [];
  let overlap = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (arg === '--overlap') overlap = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value || !(PHASES as readonly string[]).includes(value)) {
        process.stderr.write(`npm test: --only takes one of ${PHASES.join(', ')} (got ${value ?? 'nothing'})\n`);
        process.exit(2);
      }
      phases.push(value as Phase);
    } else {
      process.stderr.write(`npm test: unknown argument ${arg}\n\n${USAGE}\n`);
      process.exit(2);
    }
  }
  return { phases: phases.length ? phases : [...PHASES], overlap };
}

interface Outcome {
  phase: Phase;
  code: number;
  seconds: number;
  passed: number;
  failed: number;
  /** Passed only on a retry (Playwright in CI): shown in the summary. */
  flaky?: number;
  files: Array<{ file: string; seconds: number }>;
}

const running = new Set<ChildProcess>();

function run(
  phase: Phase,
  command: string[],
  env: Record<string, string>,
  report: string,
  read: (file: string) => Omit<Outcome, 'phase' | 'code' | 'seconds'>,
): Promise<Outcome> {
  const started = Date.now();
  process.stdout.write(`\n── ${phase}: ${command.join(' ')}\n`);
  return new Promise((done) => {
    const child = spawn(process.execPath, command, { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' });
    running.add(child);
    child.on('exit', (code, signal) => {
      running.delete(child);
      const seconds = (Date.now() - started) / 1000;
      let counts: Omit<Outcome, 'phase' | 'code' | 'seconds'> = { passed: 0, failed: 0, files: [] };
      try {
        counts = read(report);
      } catch (err) {
        process.stderr.write(`npm test: ${phase} left no readable report (${(err as Error).message})\n`);
      }
      done({ phase, code: code ?? (signal ? 1 : 0), seconds, ...counts });
    });
  });
}

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{ name: string; startTime: number; endTime: number; status: string }>;
}

function readVitest(file: string): Omit<Outcome, 'phase' | 'code' | 'seconds'> {
  const report = JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  // a file that failed to load has no test in the counts: count it as a failure
  const brokenFiles = report.testResults.filter((f) => f.status === 'failed').length;
  return {
    passed: report.numPassedTests,
    failed: Math.max(report.numFailedTests, brokenFiles),
    files: report.testResults.map((f) => ({ file: relative(ROOT, f.name), seconds: (f.endTime - f.startTime) / 1000 })),
  };
}

interface PwSuite {
  file?: string;
  specs?: Array<{ tests: Array<{ status: string; results: Array<{ duration: number }> }> }>;
  suites?: PwSuite[];
}

function readPlaywright(file: string): Omit<Outcome, 'phase' | 'code' | 'seconds'> {
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    suites: PwSuite[];
    stats: { expected: number; unexpected: number; flaky: number };
  };
  const perFile = new Map<string, number>();
  const walk = (suite: PwSuite, file: string) => {
    const here = suite.file ?? file;
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests)
        for (const result of test.results) perFile.set(here, (perFile.get(here) ?? 0) + result.duration / 1000);
    for (const child of suite.suites ?? []) walk(child, here);
  };
  for (const suite of report.suites) walk(suite, suite.file ?? '');
  return {
    passed: report.stats.expected + report.stats.flaky,
    failed: report.stats.unexpected,
    flaky: report.stats.flaky,
    files: [...perFile].map(([f, seconds]) => ({ file: `e2e/${f}`, seconds })),
  };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'eng-suite-'));
  const stop = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nnpm test: ${signal}: stopping the running phase\n`);
    for (const child of running) child.kill(signal);
    setTimeout(() => process.exit(130), 5000).unref();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));

  const suiteStarted = Date.now();
  process.stdout.write('npm test: building what the phases share (SDK dist, engine bundle, compiled entries, web UI)\n');
  ensureEngineBundle();
  // the entries many test files start, compiled once here rather than by several files at once
  await Promise.all(
    COMPILED_ENTRIES.map(([file, callMain]) => compileEntry(join(ROOT, file), { root: ROOT, callMain }).catch(() => undefined)),
  );
  if (options.phases.some((p) => p !== 'vitest')) ensureWebBuild({ log: (line) => process.stdout.write(`npm test: ${line}\n`) });

  const pw = (project: string) => [
    join(ROOT, 'node_modules/@playwright/test/cli.js'),
    'test',
    '-c',
    'e2e/playwright.config.ts',
    `--project=${project}`,
    '--no-deps',
    '--reporter=list,json',
  ];
  const phase = (p: Phase): Promise<Outcome> => {
    const report = join(work, `${p}.json`);
    if (p === 'vitest')
      return run(
        p,
        [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile=${report}`],
        {},
        report,
        readVitest,
      );
    return run(p, pw(p === 'e2e' ? 'debian-chromium' : 'perf'), { PLAYWRIGHT_JSON_OUTPUT_NAME: report }, report, readPlaywright);
  };

  const outcomes: Outcome[] = [];
  const wanted = options.phases;
  if (options.overlap && wanted.includes('vitest') && wanted.includes('e2e')) {
    outcomes.push(...(await Promise.all([phase('vitest'), phase('e2e')])));
    if (wanted.includes('perf')) outcomes.push(await phase('perf'));
  } else {
    for (const p of PHASES) if (wanted.includes(p)) outcomes.push(await phase(p));
  }
  rmSync(work, { recursive: true, force: true });

  const minutes = (s: number) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  const lines = ['', '── summary'];
  for (const o of outcomes)
    lines.push(
      `  ${o.phase.padEnd(6)} ${minutes(o.seconds).padStart(13)}  ${o.passed} passed, ${o.failed} failed${o.flaky ? ` (${o.flaky} passed on a retry: flaky)` : ''}${o.code !== 0 ? ` (exit ${o.code})` : ''}`,
    );
  lines.push(`  total  ${minutes((Date.now() - suiteStarted) / 1000).padStart(13)}`);
  const slowest = outcomes
    .flatMap((o) => o.files)
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 15);
  lines.push('', '── slowest 15 files');
  for (const f of slowest) lines.push(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.file}`);
  // every file's time, for finding where a phase goes (kept until the next run)
  const timings = join(ROOT, 'node_modules/.cache/eng-suite/timings.txt');
  try {
    mkdirSync(dirname(timings), { recursive: true });
    const all = outcomes.flatMap((o) => o.files.map((f) => `${f.seconds.toFixed(1).padStart(7)} s  ${o.phase.padEnd(6)} ${f.file}`));
    writeFileSync(timings, `${all.sort().reverse().join('\n')}\n`);
    lines.push(`  (every file: ${relative(ROOT, timings)})`);
  } catch {
    // a read-only checkout: the summary above is enough
  }
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  // a phase that exited non-zero without a failed test (a crash, a load error) still fails the run
  const failed = outcomes.reduce((n, o) => n + (o.code !== 0 && o.failed === 0 ? 1 : o.failed), 0);
  lines.push('', `${passed} passed, ${failed} failed`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exit(outcomes.every((o) => o.code === 0) ? 0 : 1);
}

await main();
