import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { isMap, isSeq, parseDocument, YAMLMap, YAMLSeq } from 'yaml';
import { parseConfigText } from '../config/load.ts';
import { resolveConfigPath } from '../config/resolve.ts';
import { BUILTIN_MODULES, findBuiltin } from '../modules/index.ts';
import { findCatalogEntry, WORKER_CATALOG } from '../supervisor/catalog.ts';
import { makeResolver } from '../supervisor/module.ts';
import { busUrlOf, querySupervisor } from '../supervisor/query.ts';
import { out as pc } from './colors.ts';

function readDoc(file: string) {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : 'workers: []\n';
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`${file}: invalid YAML: ${doc.errors[0]?.message.split('\n')[0]}`);
  if (!isMap(doc.contents)) doc.contents = new YAMLMap() as never;
  let workers = doc.get('workers');
  if (!isSeq(workers)) {
    workers = new YAMLSeq();
    doc.set('workers', workers);
  }
  return { doc, workers: workers as YAMLSeq };
}

function entryNames(workers: YAMLSeq): string[] {
  return workers.items.map((item) => (isMap(item) ? String(item.get('name') ?? '') : ''));
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  // rename is atomic: a crash never leaves a half-written config
  renameSync(tmp, file);
}

/** Never write a file the engine would refuse; rename keeps a crash from leaving half a file. */
function writeConfig(file: string, text: string): void {
  parseConfigText(text, file);
  writeAtomically(file, text);
}

export function registerWorkerCommands(program: Command): void {
  const worker = program.command('worker').description('manage the workers the engine launches (config.yaml `workers:` list)');

  worker
    .command('add')
    .description('add a worker to the configuration; the engine launches it on its next start')
    .argument(
      '<name>',
      `worker name (${WORKER_CATALOG.map((w) => w.name).join(', ')}, a built-in module such as eng-http, or any name with --command)`,
    )
    .argument('[args...]', 'arguments for --command (put them after --)')
    .option('-c, --config <file>', 'configuration file (default ./config.yaml if present, else ~/.eng/config.yaml)')
    .option('--command <command>', "launch your own worker with this command (e.g. node); the engine runs it in the config file's folder")
    .addHelpText(
      'after',
      '\nExamples:\n  eng worker add console\n  eng worker add eng-http\n  eng worker add billing --command node -- ./billing/worker.js --verbose\n',
    )
    .action((name: string, args: string[], options: { config?: string; command?: string }) => {
      const catalog = findCatalogEntry(name);
      const builtin = findBuiltin(name);
      if (args.length > 0 && !options.command) throw new Error(`arguments (${args.join(' ')}) are only taken with --command`);
      if (!options.command) {
        if (!catalog && !builtin) {
          const known = [...WORKER_CATALOG.map((w) => w.name), ...BUILTIN_MODULES.map((m) => m.name)];
          throw new Error(`unknown worker "${name}"; known workers: ${known.join(', ')}; for a worker of your own, pass --command`);
        }
        // a known name whose code is not in this build would be written and then never launch
        const launch = catalog ? makeResolver(process.cwd(), { forInstall: true })({ name }) : undefined;
        if (launch && 'reason' in launch && launch.reason) throw new Error(launch.reason);
      } else if (builtin) {
        throw new Error(`"${name}" is a built-in module; add it without --command, or give your worker another name`);
      }
      const file = resolveConfigPath(options.config);
      const fresh = !existsSync(file);
      const { doc, workers } = readDoc(file);
      if (fresh) {
        // a file replaces the defaults a file-less start runs: start from them so nothing is lost
        for (const module of BUILTIN_MODULES.filter((m) => m.defaultOn)) workers.add(doc.createNode({ name: module.name }));
      }
      const canonical = builtin?.name ?? name;
      const configured = (n: string) => entryNames(workers).some((e) => e === n || findBuiltin(e)?.name === n);
      // a worker that brings others (harness: the whole chat stack) adds the missing ones too
      const group = !options.command && catalog?.installs ? [...catalog.installs, canonical] : [canonical];
      const missing = group.filter((n) => !configured(n));
      if (missing.length === 0) {
        if (fresh) {
          writeConfig(file, doc.toString());
          process.stdout.write(`${pc.green('created')} ${file} with the default modules, ${canonical} among them\n`);
        } else process.stdout.write(`${canonical} is already configured in ${file}\n`);
        return;
      }
      for (const n of missing) {
        const defaults = n === canonical ? catalog?.defaultConfig : findCatalogEntry(n)?.defaultConfig;
        const entry = doc.createNode({
          name: n,
          ...(options.command ? { command: options.command, ...(args.length ? { args } : {}) } : {}),
          ...(defaults && !options.command && Object.keys(defaults).length ? { config: defaults } : {}),
        });
        workers.add(entry);
      }
      writeConfig(file, doc.toString());
      if (fresh)
        process.stdout.write(
          `${pc.green('created')} ${file} with the default modules (${BUILTIN_MODULES.filter((m) => m.defaultOn).length}) as a start without a file runs them\n`,
        );
      const others = missing.filter((n) => n !== canonical);
      process.stdout.write(
        `${pc.green('added')} ${canonical}${others.length ? ` with ${others.join(', ')}` : ''} to ${file}; ${missing.length > 1 ? 'they start' : 'it starts'} with the engine's next start\n`,
      );
    });

  worker
    .command('remove')
    .description('remove a worker from the configuration')
    .argument('<name>', 'worker name')
    .option('-c, --config <file>', 'configuration file')
    .action((name: string, options: { config?: string }) => {
      const file = resolveConfigPath(options.config);
      if (!existsSync(file)) throw new Error(`no configuration file at ${file}`);
      const { doc, workers } = readDoc(file);
      const canonical = findBuiltin(name)?.name ?? name;
      // removing a worker that brought others (harness) removes them with it
      const group = new Set([canonical, ...(findCatalogEntry(canonical)?.installs ?? [])]);
      const names = entryNames(workers);
      const removed = names.filter((n) => group.has(n) || group.has(findBuiltin(n)?.name ?? ''));
      if (removed.length === 0) {
        process.stdout.write(`${name} is not configured in ${file}\n`);
        return;
      }
      workers.items = workers.items.filter((_, i) => !removed.includes(names[i] as string));
      writeAtomically(file, doc.toString());
      process.stdout.write(`${pc.green('removed')} ${removed.join(', ')} from ${file}\n`);
    });

  worker
    .command('list')
    .description('list configured workers and, when the engine runs, whether each one is running')
    .option('-c, --config <file>', 'configuration file')
    .option('--json', 'print JSON')
    .option('--timeout <ms>', 'how long to wait for a running engine to answer', '1500')
    .action(async (options: { config?: string; json?: boolean; timeout: string }) => {
      const file = resolveConfigPath(options.config);
      const config = existsSync(file) ? parseConfigText(readFileSync(file, 'utf8'), file) : { path: file, workers: [] };
      const busUrl = busUrlOf(config);
      // a running engine knows what it launched (issue 7 §6); none answering means it is not running
      const states = await querySupervisor(busUrl, Math.max(100, Number(options.timeout) || 1500));
      const rows = config.workers.map((w) => {
        const module = !!findBuiltin(w.name);
        const state = states?.find((s) => s.name === w.name);
        return {
          name: w.name,
          kind: module ? 'module' : 'worker',
          description: module ? 'built-in module' : (findCatalogEntry(w.name)?.description ?? (w.command ? `command: ${w.command}` : '')),
          // a module runs inside the engine; a worker runs when the engine's supervisor says so
          running: states === null ? false : module ? true : !!state?.running,
          ...(state
            ? {
                pid: state.pid,
                restarts: state.restarts,
                url: state.url,
                log_file: state.logFile,
                ...(state.status ? { status: state.status } : {}),
                ...(state.error ? { error: state.error } : {}),
              }
            : {}),
        };
      });
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ config: file, engine: { url: busUrl, running: states !== null }, workers: rows }, null, 2)}\n`,
        );
        return;
      }
      process.stdout.write(`${pc.dim(file)}\n`);
      process.stdout.write(states === null ? `engine not running (nothing answered at ${busUrl})\n` : `engine running at ${busUrl}\n`);
      if (rows.length === 0) process.stdout.write('no workers configured; add one with `eng worker add <name>`\n');
      for (const row of rows) {
        // a worker that is not running says why: crash loop, failed to launch (engine::supervisor::list)
        const why =
          'status' in row && row.status === 'crash_loop'
            ? 'crash loop'
            : 'status' in row && row.status === 'failed_to_launch'
              ? 'failed'
              : '';
        const plain = states === null ? '' : row.running ? 'running' : why || 'stopped';
        const status = (row.running ? pc.green : why ? pc.red : pc.yellow)(plain.padEnd(10));
        const detail =
          'pid' in row && row.running
            ? `pid ${row.pid}${row.url ? `  ${row.url}` : ''}`
            : 'error' in row && row.error
              ? row.error
              : 'restarts' in row && row.restarts
                ? `${row.description ? `${row.description}; ` : ''}${row.restarts} restarts, log ${row.log_file}`
                : row.description;
        process.stdout.write(`  ${row.name.padEnd(22)} ${row.kind.padEnd(7)} ${plain ? `${status} ` : ''}${pc.dim(detail)}\n`);
      }
    });
}
