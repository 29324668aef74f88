import type { FunctionRecord } from '../../api/functions.ts';
import { isSystemFunction } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import type { WorkerRecord } from '../../api/workers.ts';
import { namespaceOf } from '../../lib/format.ts';

/** Rows of the virtualised function list: the platform section header, namespace headers and functions (seed 2.2). */
export type FunctionRow =
  | { kind: 'section'; count: number; collapsed: boolean }
  | { kind: 'group'; namespace: string; count: number; collapsed: boolean }
  | { kind: 'function'; fn: FunctionRecord; triggers: TriggerSummary; worker: WorkerSummary };

/**
 * Namespaces of the workers that come with eng rather than with the user's application: the chat
 * stack (harness, session, router, providers, approval, context), worktrees, the console worker
 * and the MCP server. With the chat stack installed they outnumber a demo's functions several
 * times over, so the list shows the application's first and these in one section, collapsed.
 */
export const PLATFORM_NAMESPACES: ReadonlySet<string> = new Set([
  'harness',
  'session',
  'router',
  'provider',
  'approval',
  'context',
  'worktree',
  'console',
  'mcp',
]);
const PLATFORM_WORKERS = /^(harness|session-manager|approval-gate|llm-router|provider-[\w-]+|context-manager|worktree|console|mcp)$/;

/** A function served by one of eng's own workers (chat stack, worktrees, console, MCP), not the user's application. */
export function isPlatformFunction(fn: Pick<FunctionRecord, 'function_id' | 'worker_name'>): boolean {
  return PLATFORM_NAMESPACES.has(namespaceOf(fn.function_id)) || PLATFORM_WORKERS.test(fn.worker_name);
}

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
  /** The platform section is open (it starts collapsed; a search opens it too). */
  platformOpen?: boolean;
}

/**
 * Filter, group by namespace (sorted), and flatten into list rows: the application's namespaces
 * first, then the platform section (collapsed unless opened or searched). O(n) plus the sort.
 */
export function buildRows(
  functions: FunctionRecord[],
  triggers: Map<string, TriggerSummary>,
  workers: Map<string, WorkerRecord>,
  { search, showSystem, collapsed, platformOpen = false }: RowOptions,
): { rows: FunctionRow[]; shown: number; hiddenSystem: number } {
  const q = search.trim().toLowerCase();
  const groups = new Map<string, FunctionRecord[]>();
  const platform = new Map<string, FunctionRecord[]>();
  let platformCount = 0;
  let hiddenSystem = 0;
  let shown = 0;
  for (const fn of functions) {
    if (!showSystem && isSystemFunction(fn)) {
      hiddenSystem++;
      continue;
    }
    if (q && !fn.function_id.toLowerCase().includes(q) && !(fn.description ?? '').toLowerCase().includes(q)) continue;
    const ns = namespaceOf(fn.function_id);
    const isPlatform = !isSystemFunction(fn) && isPlatformFunction(fn);
    const into = isPlatform ? platform : groups;
    const list = into.get(ns);
    if (list) list.push(fn);
    else into.set(ns, [fn]);
    if (isPlatform) platformCount++;
    shown++;
  }
  const rows: FunctionRow[] = [];
  const none: TriggerSummary = { count: 0, types: [] };
  const pushGroups = (from: Map<string, FunctionRecord[]>) => {
    const names = [...from.keys()].sort((a, b) => (a === 'other' ? 1 : b === 'other' ? -1 : a.localeCompare(b)));
    for (const ns of names) {
      const list = (from.get(ns) as FunctionRecord[]).sort((a, b) => (a.function_id < b.function_id ? -1 : 1));
      // a search expands everything: the match must be visible
      const isCollapsed = !q && collapsed.has(ns);
      rows.push({ kind: 'group', namespace: ns, count: list.length, collapsed: isCollapsed });
      if (isCollapsed) continue;
      for (const fn of list)
        rows.push({ kind: 'function', fn, triggers: triggers.get(fn.function_id) ?? none, worker: workerOf(fn, workers) });
    }
  };
  pushGroups(groups);
  if (platformCount > 0) {
    const sectionCollapsed = !q && !platformOpen;
    rows.push({ kind: 'section', count: platformCount, collapsed: sectionCollapsed });
    if (!sectionCollapsed) pushGroups(platform);
  }
  return { rows, shown, hiddenSystem };
}
