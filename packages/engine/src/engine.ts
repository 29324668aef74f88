import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { type BusAddress, BusService } from './bus/server.ts';
import { ConfigError, describeIssue, type EngineConfig, type WorkerEntry } from './config/load.ts';
import { Core } from './core/core.ts';
import { createModuleContext, type EngineModule, ServiceMap } from './core/module.ts';
import { Logger } from './log.ts';
import { BUILTIN_MODULES, findBuiltin } from './modules/index.ts';
import { ENGINE_VERSION } from './version.ts';

export interface EngineOptions {
  config: EngineConfig;
  /** Where file-based stores live; default `./data`. */
  dataDir?: string;
  /** Extra modules (tests, embedders), started after the configured ones. */
  extraModules?: EngineModule<any>[];
}

export interface EngineAddresses {
  bus: BusAddress;
  /** Addresses other modules announce (`http`, `streams`, …). */
  [name: string]: unknown;
}

interface PlannedModule {
  module: EngineModule<any>;
  config: unknown;
}

/** A running engine: the core plus its modules. */
export class Engine {
  readonly core: Core;
  readonly services = new ServiceMap();
  readonly log = new Logger('engine');
  readonly dataDir: string;
  /** Configured entries that are not built-in modules: external workers for the supervisor. */
  readonly externalWorkers: WorkerEntry[] = [];
  private readonly planned: PlannedModule[];
  private readonly started: EngineModule<any>[] = [];
  private stopping?: Promise<void>;

  constructor(private readonly options: EngineOptions) {
    this.core = new Core(this.log, ENGINE_VERSION);
    this.dataDir = resolve(options.dataDir ?? process.env.ENG_DATA_DIR ?? 'data');
    this.services.set('engine.dataDir', this.dataDir);
    this.planned = this.plan(options.config);
    this.services.set('engine.externalWorkers', this.externalWorkers);
    this.services.set('engine.configPath', options.config.path);
    this.services.set('engine.configText', options.config.text ?? null);
  }

  /** Resolve config entries into modules with validated configs; throws ConfigError naming the entry and key. */
  private plan(config: EngineConfig): PlannedModule[] {
    const file = config.path ?? '(defaults)';
    const entries: WorkerEntry[] = config.path ? config.workers : BUILTIN_MODULES.filter((m) => m.defaultOn).map((m) => ({ name: m.name }));
    const planned: PlannedModule[] = [];
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      const builtin = findBuiltin(entry.name);
      if (!builtin) {
        this.externalWorkers.push(entry);
        return;
      }
      // several buses may run side by side (an open one and RBAC ones, spec §2.13); other modules once
      if (seen.has(builtin.name) && builtin.name !== 'eng-worker-manager') {
        throw new ConfigError(`${file}: workers[${index}] (${entry.name}): ${builtin.name} is listed twice`);
      }
      seen.add(builtin.name);
      const module = builtin.create();
      planned.push({ module, config: this.parseModuleConfig(module, entry.config ?? {}, `${file}: workers[${index}] (${entry.name})`) });
    });
    for (const builtin of BUILTIN_MODULES) {
      if (seen.has(builtin.name)) continue;
      const module = builtin.create();
      if (module.mandatory) planned.unshift({ module, config: this.parseModuleConfig(module, {}, `${file}: ${module.name}`) });
    }
    // dependency order: the list order of BUILTIN_MODULES (the bus first); the supervisor last, so
    // external workers start once every module is up and stop before any module goes down
    const rank = (name: string) =>
      name === 'eng-supervisor' ? Number.MAX_SAFE_INTEGER : BUILTIN_MODULES.findIndex((m) => m.name === name);
    planned.sort((a, b) => rank(a.module.name) - rank(b.module.name));
    for (const module of this.options.extraModules ?? []) planned.push({ module, config: this.parseModuleConfig(module, {}, module.name) });
    return planned;
  }

  private parseModuleConfig(module: EngineModule<any>, raw: unknown, where: string): unknown {
    const parsed = (module.configSchema as z.ZodType).safeParse(raw);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new ConfigError(`${where}: ${describeIssue({ config: raw } as Record<string, unknown>, issue, ['config'])}`);
  }

  get moduleNames(): string[] {
    return this.planned.map((p) => p.module.name);
  }

  async start(): Promise<EngineAddresses> {
    mkdirSync(this.dataDir, { recursive: true });
    for (const { module, config } of this.planned) {
      const ctx = createModuleContext(module, config, { core: this.core, services: this.services, dataDir: this.dataDir, log: this.log });
      this.core.workers.modules.set(module.name, { name: module.name, internal: !!module.mandatory, startedAtMs: Date.now() });
      await module.start(ctx);
      this.started.push(module);
    }
    for (const module of this.started) await module.afterStart?.();
    return this.addresses();
  }

  addresses(): EngineAddresses {
    const addresses: EngineAddresses = { bus: this.services.get<BusAddress>(BusService.Address) as BusAddress };
    for (const [name, value] of this.services.entries()) {
      if (name.startsWith('address.')) addresses[name.slice('address.'.length)] = value;
    }
    return addresses;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.core.invoker.stopAll();
      for (const module of [...this.started].reverse()) {
        try {
          await module.stop?.();
        } catch (err) {
          this.log.warn(`module ${module.name} failed to stop cleanly`, { error: (err as Error).message });
        }
      }
    })();
    return this.stopping;
  }
}
