import { useQuery } from '@tanstack/react-query';
import { callEngine } from '../../api/client.ts';
import { type FunctionRecord, functionKeys, isSystemFunction } from '../../api/functions.ts';
import { engineRetry } from '../../api/outage.ts';
import { isSystemStream, type StreamInfo } from '../../api/streams.ts';
import { isSystemTrigger, type TriggerRecord } from '../../api/triggers.ts';
import { isUiFunction } from '../../api/ui-ids.ts';
import { isProcessWorker, type WorkerRecord } from '../../api/workers.ts';
import { KIND_LABEL, KIND_ORDER, kindOf } from '../../lib/trigger-kind.ts';

/**
 * The dashboard's counters come from one read (issue 25 item 14): functions, triggers, workers and
 * streams are asked for together and the cards change only when all four have answered, so they
 * always describe the same moment. Separate queries refreshed one by one showed "Functions 77,
 * Triggers 0, Workers 0" while an engine shut its workers down. A read that fails (the engine went
 * away mid-read) changes nothing: the previous set stays, marked stale.
 */
export interface DashboardSnapshot {
  functions: FunctionRecord[];
  triggers: TriggerRecord[];
  workers: WorkerRecord[];
  /** `null`: the engine has no streams module (not an outage: it answered "no such function"). */
  streams: StreamInfo[] | null;
  /** When the read completed (ms). */
  at: number;
}

export type EngineCall = <T>(functionId: string, payload: unknown) => Promise<T>;

/** A read is torn when a worker came or went between its calls; read again this many times before taking it as it is. */
const TORN_RETRIES = 2;

/**
 * A worker joined or left between the calls of one read: a listed worker's functions are missing
 * from the function list, or functions (or bindings) still name a worker that `previous` listed
 * and this read no longer does.
 */
export function isTorn(
  s: Pick<DashboardSnapshot, 'functions' | 'triggers' | 'workers'>,
  previous?: Pick<DashboardSnapshot, 'workers'>,
): boolean {
  const functionIds = new Set(s.functions.map((f) => f.function_id));
  for (const w of s.workers) for (const id of w.functions) if (!isUiFunction(id) && !functionIds.has(id)) return true;
  if (!previous) return false;
  const listed = new Set(s.workers.map((w) => w.id));
  const gone = new Set(previous.workers.filter((w) => !listed.has(w.id)).map((w) => w.id));
  if (gone.size === 0) return false;
  return s.functions.some((f) => f.worker_id && gone.has(f.worker_id)) || s.triggers.some((t) => t.worker_id && gone.has(t.worker_id));
}

async function readOnce(call: EngineCall): Promise<Omit<DashboardSnapshot, 'at'>> {
  const [functions, triggers, workers, streams] = await Promise.all([
    call<{ functions: FunctionRecord[] }>('engine::functions::list', { include_internal: true }),
    call<{ registered_triggers: TriggerRecord[] }>('engine::registered-triggers::list', { include_internal: true }),
    call<{ workers: WorkerRecord[] }>('engine::workers::list', {}),
    call<{ stream?: StreamInfo[]; streams?: StreamInfo[] }>('stream::list_all', {}).catch((err: unknown) => {
      // an engine without the streams module answers "no such function": a fact of the snapshot, not a failed read
      if ((err as { code?: string } | null)?.code === 'function_not_found') return null;
      throw err;
    }),
  ]);
  return {
    functions: functions.functions.filter((f) => !isUiFunction(f.function_id)),
    triggers: triggers.registered_triggers.filter((t) => !isUiFunction(t.function_id)),
    workers: workers.workers,
    streams: streams === null ? null : (streams.stream ?? streams.streams ?? []),
  };
}

/** One read of the four lists; any call failing fails the read (nothing partial is returned). */
export async function readDashboardSnapshot(
  call: EngineCall,
  previous?: DashboardSnapshot,
  now: () => number = Date.now,
): Promise<DashboardSnapshot> {
  let read = await readOnce(call);
  for (let i = 0; i < TORN_RETRIES && isTorn(read, previous); i++) read = await readOnce(call);
  return { ...read, at: now() };
}

/** What the four cards show, all from one snapshot. */
export interface DashboardCounts {
  functions: number;
  systemFunctions: number;
  triggers: number;
  /** User triggers by kind, in the Triggers page's order: `[['HTTP', 3], ['Cron', 1]]`. */
  triggerKinds: Array<[string, number]>;
  workers: number;
  engineModules: number;
  /** `null` without a streams module. */
  streams: number | null;
  streamGroups: number;
}

export function countsOf(s: DashboardSnapshot): DashboardCounts {
  const userFunctions = s.functions.filter((f) => !isSystemFunction(f));
  const userTriggers = s.triggers.filter((t) => !isSystemTrigger(t));
  const kinds = new Map<string, number>();
  for (const kind of KIND_ORDER) {
    const n = userTriggers.filter((t) => kindOf(t.trigger_type) === kind).length;
    if (n > 0) kinds.set(KIND_LABEL[kind], n);
  }
  const processes = s.workers.filter(isProcessWorker).length;
  return {
    functions: userFunctions.length,
    systemFunctions: s.functions.length - userFunctions.length,
    triggers: userTriggers.length,
    triggerKinds: [...kinds.entries()],
    workers: processes,
    engineModules: s.workers.length - processes,
    streams: s.streams === null ? null : s.streams.length,
    streamGroups: (s.streams ?? []).filter((st) => !isSystemStream(st.id)).reduce((n, st) => n + st.groups.length, 0),
  };
}

/**
 * Under `functions`: the live triggers (a worker or a function came or went) refresh it with the
 * lists, and the shutdown rollback (api/shutdown-rollback.ts) puts it back with them. Bindings
 * added to existing functions and new streams fire no trigger: a 5 s poll covers them.
 */
export const dashboardSnapshotKey = [...functionKeys.all, 'dashboard-snapshot'] as const;

export function useDashboardSnapshot() {
  return useQuery({
    queryKey: dashboardSnapshotKey,
    queryFn: ({ client }) =>
      readDashboardSnapshot((id, payload) => callEngine(id, payload), client.getQueryData<DashboardSnapshot>(dashboardSnapshotKey)),
    refetchInterval: 5_000,
    retry: engineRetry(1),
  });
}
