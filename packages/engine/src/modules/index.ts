import { workerManagerModule } from '../bus/server.ts';
import type { EngineModule } from '../core/module.ts';
import { supervisorModule } from '../supervisor/module.ts';
import { bridgeModule } from './bridge/index.ts';
import { clusterModule } from './cluster/index.ts';
import { configurationModule } from './configuration/index.ts';
import { cronModule } from './cron/index.ts';
import { httpModule } from './http/index.ts';
import { httpFunctionsModule } from './http-functions/index.ts';
import { introspectionModule } from './introspection/index.ts';
import { observabilityModule } from './observability/index.ts';
import { pubsubModule } from './pubsub/index.ts';
import { queueModule } from './queue/index.ts';
import { stateModule } from './state/index.ts';
import { streamModule } from './stream/index.ts';

/**
 * Every built-in module, by config name. A new module is one line here; the core never changes.
 * `defaultOn`: started when the engine runs without a config file.
 */
export const BUILTIN_MODULES: ReadonlyArray<{ name: string; create: () => EngineModule<any>; defaultOn: boolean }> = [
  { name: 'eng-worker-manager', create: workerManagerModule, defaultOn: true },
  { name: 'eng-observability', create: observabilityModule, defaultOn: true },
  { name: 'eng-engine-functions', create: introspectionModule, defaultOn: true },
  { name: 'eng-http', create: httpModule, defaultOn: true },
  { name: 'eng-pubsub', create: pubsubModule, defaultOn: true },
  { name: 'eng-cron', create: cronModule, defaultOn: true },
  { name: 'eng-state', create: stateModule, defaultOn: true },
  // after eng-state: its entries live in the state module's store
  { name: 'eng-configuration', create: configurationModule, defaultOn: true },
  { name: 'eng-stream', create: streamModule, defaultOn: true },
  { name: 'eng-queue', create: queueModule, defaultOn: true },
  // off unless listed: registrations with an invocation URL are refused without it (spec §3.4)
  { name: 'eng-http-functions', create: httpFunctionsModule, defaultOn: false },
  // off unless listed: this engine as a worker of another one (expose / forward)
  { name: 'eng-bridge', create: bridgeModule, defaultOn: false },
  // off unless listed: one of several engines on a Redis (calls routed between them, routes on each)
  { name: 'eng-cluster', create: clusterModule, defaultOn: false },
  { name: 'eng-supervisor', create: supervisorModule, defaultOn: true },
];

export function findBuiltin(name: string): { name: string; create: () => EngineModule<any> } | undefined {
  // `iii-worker-manager#rbac`: a `#name` suffix tells several entries of one module apart (spec §7.1)
  const base = name.replace(/#.*$/, '').replace(/^iii-/, 'eng-');
  // a module's own aliases resolve too (e.g. `queue`, the name of iii 0.22.1's registry queue worker)
  return (
    BUILTIN_MODULES.find((m) => m.name === base) ?? BUILTIN_MODULES.find((m) => m.create().aliases?.includes(name.replace(/#.*$/, '')))
  );
}
