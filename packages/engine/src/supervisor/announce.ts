import type { EngineServices } from '../core/module.ts';
import { findCatalogEntry } from './catalog.ts';
import { SupervisorService } from './module.ts';
import type { Supervisor } from './supervisor.ts';

/**
 * `eng start`'s lines about supervised workers (issue 7 §6): the banner names them, and each
 * catalog worker's URL is printed once it serves — `  console     http://127.0.0.1:3113/` plus a
 * machine-readable `eng: worker ready {"name","url"}` line for scripts and tests.
 */
export function announceSupervisedWorkers(services: EngineServices, write: (text: string) => void): string[] {
  const supervisor = services.get<Supervisor>(SupervisorService);
  if (!supervisor) return [];
  const names = supervisor.names();
  if (names.length === 0) return [];
  const announced = new Map<string, string>();
  const announce = (name: string, url: string | null) => {
    if (!url || announced.get(name) === url) return;
    announced.set(name, url);
    const label = findCatalogEntry(name)?.readiness?.label;
    write(`  ${name.padEnd(10)}  ${url}${label ? `  (${label})` : ''}\n`);
    write(`eng: worker ready ${JSON.stringify({ name, url })}\n`);
  };
  supervisor.onReady(({ name, url }) => {
    if (url) announce(name, url);
    else announced.delete(name); // announce again once the restarted worker serves
  });
  // the lines are written after the banner: anything already known goes out on the next turn
  setImmediate(() => {
    for (const state of supervisor.states()) announce(state.name, state.url);
  });
  const waiting = names.map((name) => (findCatalogEntry(name)?.readiness ? `${name} (starting)` : name));
  return [`  workers     ${waiting.join(', ')}`];
}
