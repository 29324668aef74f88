import type { FunctionRecord } from '../../api/functions.ts';
import { isSystemFunction } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import type { WorkerRecord } from '../../api/workers.ts';
import { namespaceOf } from '../../lib/format.ts';

/** Rows of the virtualised function list: namespace headers and functions (seed 2.2). */
export type FunctionRow =
  | { kind: 'group'; namespace: string; count: number; collapsed: boolean }
  | { kind: 'function'; fn: FunctionRecord; triggers: TriggerSummary; worker: WorkerSummary };

export interface TriggerSummary {
  count: number;
  types: string[];
}

export interface WorkerSummary {
  /** The worker's name; for an HTTP-invoked function, its method and URL (the engine calls it, no worker runs it). */
  name: string;
  /** `ready` (idle), `busy` (invocations in flight), `engine` (built into the engine) or `http` (the engine calls a URL). */
  status: 'ready' | 'busy' | 'engine' | 'http';
}

export function summariseTriggers(triggers: TriggerRecord[] | undefined): Map<string, TriggerSummary> {
  const out = new Map<string, TriggerSummary>();
  for (const t of triggers ?? []) {
    const entry = out.get(t.function_id) ?? { count: 0, types: [] };
    entry.count++;
    if (!entry.types.includes(t.trigger_type)) entry.types.push(t.trigger_type);
    out.set(t.function_id, entry);
  }
  return out;
}

export function workerOf(fn: FunctionRecord, workers: Map<string, WorkerRecord>): WorkerSummary {
  // engine-protocol §3.4: served by calling a URL (shown redacted by the engine)
  if (fn.kind === 'http') return { name: fn.invocation ? `${fn.invocation.method} ${fn.invocation.url}` : 'HTTP', status: 'http' };
  const w = fn.worker_id ? workers.get(fn.worker_id) : undefined;
  if (!fn.worker_id || w?.runtime === 'engine') return { name: fn.worker_name, status: 'engine' };
  return { name: w?.name ?? fn.worker_name, status: w?.status === 'busy' ? 'busy' : 'ready' };
}

export interface RowOptions {
  search: string;
  showSystem: boolean;
  collapsed: Set<string>;
}

/** Filter, group by namespace (sorted), and flatten into list rows. O(n) plus the sort. */
export function buildRows(
  functions: FunctionRecord[],
  triggers: Map<string, TriggerSummary>,
  workers: Map<string, WorkerRecord>,
  { search, showSystem, collapsed }: RowOptions,
): { rows: FunctionRow[]; shown: number; hiddenSystem: number } {
  const q = search.trim().toLowerCase();
  const groups = new Map<string, FunctionRecord[]>();
  let hiddenSystem = 0;
  let shown = 0;
  for (const fn of functions) {
    if (!showSystem && isSystemFunction(fn)) {
      hiddenSystem++;
      continue;
    }
    if (q && !fn.function_id.toLowerCase().includes(q) && !(fn.description ?? '').toLowerCase().includes(q)) continue;
    const ns = namespaceOf(fn.function_id);
    const list = groups.get(ns);
    if (list) list.push(fn);
    else groups.set(ns, [fn]);
    shown++;
  }
  const rows: FunctionRow[] = [];
  const names = [...groups.keys()].sort((a, b) => (a === 'other' ? 1 : b === 'other' ? -1 : a.localeCompare(b)));
  const none: TriggerSummary = { count: 0, types: [] };
  for (const ns of names) {
    const list = (groups.get(ns) as FunctionRecord[]).sort((a, b) => (a.function_id < b.function_id ? -1 : 1));
    // a search expands everything: the match must be visible
    const isCollapsed = !q && collapsed.has(ns);
    rows.push({ kind: 'group', namespace: ns, count: list.length, collapsed: isCollapsed });
    if (isCollapsed) continue;
    for (const fn of list)
      rows.push({ kind: 'function', fn, triggers: triggers.get(fn.function_id) ?? none, worker: workerOf(fn, workers) });
  }
  return { rows, shown, hiddenSystem };
}
