import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { compileEntry } from '../../scripts/compile.mjs';
import { type AdoptedUpgrade, type BusAddress, type BusAdopt, BusService } from '../bus/server.ts';
import type { WorkerEntry } from '../config/load.ts';
import type { EngineModule } from '../core/module.ts';
import { secretRegistry } from '../modules/observability/secret-registry.ts';
import { findCatalogEntry } from './catalog.ts';
import { watchReadiness } from './readiness.ts';
import { type Resolver, resolveCommandPath, Supervisor } from './supervisor.ts';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const TSX_LOADER = (() => {
  const candidate = join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs');
  return existsSync(candidate) ? candidate : 'tsx';
})();

/** The engine's own tsx, as a file URL Node's `--import` takes from any folder. */
const ENGINE_TSX = (() => {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  } catch {
    return undefined;
  }
})();

/**
 * `node --import tsx worker.ts` resolves `tsx` from the worker's folder (the config file's), which
 * often has no node_modules: then the engine lends its own tsx instead of letting the worker die
 * with ERR_MODULE_NOT_FOUND on every restart.
 */
export function withReachableTsx(command: string, args: string[], configDir: string): string[] {
  if (!ENGINE_TSX || basename(command).replace(/\.exe$/, '') !== 'node') return args;
  const reachable = (() => {
    try {
      createRequire(join(configDir, 'noop.js')).resolve('tsx');
      return true;
    } catch {
      return false;
    }
  })();
  if (reachable) return args;
  return args.map((arg, i) => {
    const flag = args[i - 1];
    if ((flag === '--import' || flag === '--loader') && (arg === 'tsx' || arg === 'tsx/esm')) return ENGINE_TSX;
    if (arg === '--import=tsx' || arg === '--loader=tsx') return `${arg.slice(0, arg.indexOf('=') + 1)}${ENGINE_TSX}`;
    return arg;
  });
}

/** Where the catalog's workers live in this repository (entry file run with tsx). */
const CATALOG_ENTRIES: Record<string, string> = {
  console: 'packages/console-worker/src/main.ts',
  mcp: 'packages/mcp/src/main.ts',
  worktree: 'packages/worktree/src/main.ts',
};

/**
 * The chat stack's workers: the `eng-chat` launcher (packages/harness/src/main.ts) runs each role;
 * the second path is the role's own module (packages/harness/src/roles.ts keeps the same table).
 */
const CHAT_LAUNCHER = 'packages/harness/src/main.ts';
const CHAT_ROLES: Record<string, [role: string, module: string]> = {
  'session-manager': ['session', 'packages/harness/src/session/worker.ts'],
  'approval-gate': ['approval', 'packages/harness/src/approval/worker.ts'],
  'llm-router': ['router', 'packages/harness/src/router/worker.ts'],
  'provider-openai': ['provider-openai', 'packages/harness/src/providers/openai/worker.ts'],
  'provider-anthropic': ['provider-anthropic', 'packages/harness/src/providers/anthropic/worker.ts'],
  'context-manager': ['context', 'packages/harness/src/context/worker.ts'],
  harness: ['harness', 'packages/harness/src/harness/worker.ts'],
};

export const SupervisorService = 'engine.supervisor';

/**
 * How the engine launches a config entry. `forInstall`: only check that the worker's package is in
 * this build (`eng worker add harness` may add chat roles whose code another change brings).
 */
export function makeResolver(
  configDir: string,
  options: {
    forInstall?: boolean;
    /** Entries compiled ahead (compiledWorkers): source file → compiled file, run with plain node. */
    compiled?: ReadonlyMap<string, string>;
  } = {},
): Resolver {
  return (entry: WorkerEntry) => {
    if (entry.command) {
      const args = withReachableTsx(entry.command, entry.args ?? [], configDir);
      return { spec: { command: resolveCommandPath(entry.command, configDir), args, cwd: configDir } };
    }
    const catalog = findCatalogEntry(entry.name);
    const chat = CHAT_ROLES[entry.name];
    if (catalog && chat) {
      const launcher = join(REPO_ROOT, CHAT_LAUNCHER);
      if (!existsSync(launcher)) return { reason: `${entry.name} is not installed in this build (${CHAT_LAUNCHER} is missing)` };
      if (!options.forInstall && !existsSync(join(REPO_ROOT, chat[1])))
        return { reason: `${entry.name} is not in this build yet (${chat[1]} is missing)` };
      const compiled = options.compiled?.get(join(REPO_ROOT, chat[1]));
      if (compiled) return { spec: { command: process.execPath, args: [compiled, ...(entry.args ?? [])], cwd: configDir } };
      return {
        spec: { command: process.execPath, args: ['--import', TSX_LOADER, launcher, chat[0], ...(entry.args ?? [])], cwd: configDir },
      };
    }
    const file = CATALOG_ENTRIES[entry.name];
    if (!catalog || !file) return { reason: `no command given and "${entry.name}" is not a known worker` };
    const path = join(REPO_ROOT, file);
    if (!existsSync(path)) return { reason: `${entry.name} is not installed in this build (${file} is missing)` };
    const compiled = options.compiled?.get(path);
    return {
      spec: {
        command: process.execPath,
        args: compiled ? [compiled, ...(entry.args ?? [])] : ['--import', TSX_LOADER, path, ...(entry.args ?? [])],
        cwd: configDir,
        ipc: catalog.busHandoff === true,
      },
    };
  };
}

/**
 * `{type: 'eng:bus-adopt', path, headers, head}` from a supervised worker: a WebSocket upgrade it
 * accepted for the bus (console worker `/ws`), sent with the browser's socket as the IPC handle.
 */
export function adoptedUpgrade(message: unknown): AdoptedUpgrade | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.type !== 'eng:bus-adopt' || typeof m.path !== 'string' || typeof m.head !== 'string') return undefined;
  if (typeof m.headers !== 'object' || m.headers === null || Array.isArray(m.headers)) return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(m.headers as Record<string, unknown>)) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) headers[name.toLowerCase()] = value as string[];
  }
  return { path: m.path, headers, head: Buffer.from(m.head, 'base64') };
}

interface ListenAddress {
  host: string;
  port: number;
}

/** A listener's URL as a worker on this machine reaches it: an unspecified bind address means loopback. */
export function localUrl(scheme: 'http' | 'ws', address: ListenAddress | undefined): string | undefined {
  if (!address) return undefined;
  const host = address.host === '0.0.0.0' || address.host === '' ? '127.0.0.1' : address.host === '::' ? '::1' : address.host;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/**
 * The catalog's workers an entry list launches, compiled ahead (scripts/compile.mjs): each starts in
 * about half the CPU of the same source through tsx (a chat stack is seven processes; the console
 * worker loads its generated UI module from src/generated/ at run time). A worker that cannot be
 * compiled here runs from source; ENG_FROM_SOURCE=1 runs them all from source.
 */
export async function compiledWorkers(entries: readonly WorkerEntry[]): Promise<Map<string, string>> {
  const compiled = new Map<string, string>();
  if (process.env.ENG_FROM_SOURCE === '1') return compiled;
  const wanted: Array<{ source: string; callMain: boolean }> = [];
  for (const entry of entries) {
    if (entry.command || !findCatalogEntry(entry.name)) continue;
    const chat = CHAT_ROLES[entry.name];
    if (chat) wanted.push({ source: join(REPO_ROOT, chat[1]), callMain: true });
    else if (CATALOG_ENTRIES[entry.name]) wanted.push({ source: join(REPO_ROOT, CATALOG_ENTRIES[entry.name] as string), callMain: false });
  }
  await Promise.all(
    wanted.map(async ({ source, callMain }) => {
      if (!existsSync(source)) return;
      const file = await compileEntry(source, { root: REPO_ROOT, callMain }).catch(() => undefined);
      if (file) compiled.set(source, file);
    }),
  );
  return compiled;
}

/** Launches the config's external workers once the bus is listening; stops them first on shutdown. */
export function supervisorModule(): EngineModule<Record<string, never>> {
  let supervisor: Supervisor | undefined;
  let start: (() => void) | undefined;
  let stopWatching: (() => void) | undefined;
  return {
    name: 'eng-supervisor',
    description: 'launches and restarts the external workers listed in config.yaml',
    configSchema: z.object({}).strict() as unknown as z.ZodType<Record<string, never>>,
    mandatory: true,
    async start(ctx) {
      const entries = ctx.services.get<WorkerEntry[]>('engine.externalWorkers') ?? [];
      const compiled = await compiledWorkers(entries);
      const configPath = ctx.services.get<string | null>('engine.configPath');
      const configDir = configPath ? dirname(configPath) : process.cwd();
      ctx.registerFunction(
        {
          id: 'engine::supervisor::list',
          description: 'External workers launched by this engine: pid, running, restarts, last exit, log file and the URL they serve',
        },
        () => ({
          workers: supervisor?.states() ?? [],
        }),
      );
      start = () => {
        const bus = ctx.services.get<BusAddress>(BusService.Address);
        if (!bus || entries.length === 0) return;
        const busUrl = `ws://${bus.host === '0.0.0.0' ? '127.0.0.1' : bus.host}:${bus.port}`;
        supervisor = new Supervisor({
          busUrl,
          logDir: join(ctx.dataDir, 'logs'),
          configDir,
          resolver: makeResolver(configDir, { compiled }),
          log: ctx.log,
          stateFile: join(ctx.dataDir, 'supervisor.json'),
          // configuration secrets (eng-configuration publishes them) never show in a stderr tail either
          secretValues: () => secretRegistry(ctx.services).values(),
          addresses: {
            http: localUrl('http', ctx.services.get<ListenAddress>('address.http')),
            streams: localUrl('ws', ctx.services.get<ListenAddress>('address.streams')),
          },
          onMessage: (name, message, handle) => {
            const request = adoptedUpgrade(message);
            if (!request) {
              if (handle instanceof Socket) handle.destroy();
              ctx.log.debug(`ignored an IPC message from worker ${name}`);
              return;
            }
            if (!(handle instanceof Socket)) {
              ctx.log.warn(`worker ${name} handed over a bus connection without its socket`);
              return;
            }
            const adopt = ctx.services.get<BusAdopt>(BusService.Adopt);
            if (adopt) adopt(request, handle);
            else handle.destroy();
          },
        });
        ctx.services.set(SupervisorService, supervisor);
        supervisor.start(entries);
        // the children are spawned, none has connected yet: nothing is missed
        stopWatching = watchReadiness(ctx, supervisor);
      };
    },
    afterStart() {
      start?.();
    },
    async stop() {
      stopWatching?.();
      await supervisor?.stop();
    },
  };
}
