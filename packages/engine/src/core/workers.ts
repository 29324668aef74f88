import type { WorkerMetrics, WorkerRecord } from '@eng/protocol';

/** What the core needs from a bus connection: an id and a way to send it a frame. */
export interface WorkerPeer {
  readonly id: string;
  readonly ipAddress: string | null;
  readonly connectedAtMs: number;
  /** Send a frame (object is JSON-encoded; a string is sent as is). False when the socket is gone. */
  send(frame: object | string): boolean;
  /** Close the connection (used by reattach eviction). Resolves when cleanup is done. */
  evict(reason: string): Promise<void>;
}

export interface WorkerInfoUpdate {
  name?: string | null;
  description?: string | null;
  runtime?: string | null;
  version?: string | null;
  os?: string | null;
  pid?: number | null;
  isolation?: string | null;
  telemetry?: unknown;
}

export interface WorkerEntry {
  peer: WorkerPeer;
  reattachToken: string;
  info: WorkerInfoUpdate;
  activeInvocations: number;
  latestMetrics: WorkerMetrics | null;
}

/** In-process modules listed as workers (§4.1: runtime "engine", status "available"). */
export interface ModuleWorker {
  name: string;
  internal: boolean;
  startedAtMs: number;
}

export class WorkerRegistry {
  private readonly workers = new Map<string, WorkerEntry>();
  readonly modules = new Map<string, ModuleWorker>();

  add(peer: WorkerPeer, reattachToken: string): WorkerEntry {
    const entry: WorkerEntry = { peer, reattachToken, info: {}, activeInvocations: 0, latestMetrics: null };
    this.workers.set(peer.id, entry);
    return entry;
  }
  remove(id: string): WorkerEntry | undefined {
    const entry = this.workers.get(id);
    this.workers.delete(id);
    return entry;
  }
  get(id: string): WorkerEntry | undefined {
    return this.workers.get(id);
  }
  all(): IterableIterator<WorkerEntry> {
    return this.workers.values();
  }
  get size(): number {
    return this.workers.size;
  }

  /** Display name of a worker: its registered name, else a short form of its id. */
  nameOf(id: string | null | undefined): string | undefined {
    if (!id) return undefined;
    const entry = this.workers.get(id);
    return entry?.info.name ?? undefined;
  }

  toRecord(entry: WorkerEntry, functions: string[]): WorkerRecord {
    const info = entry.info;
    return {
      id: entry.peer.id,
      name: info.name ?? `worker-${entry.peer.id.slice(0, 8)}`,
      description: info.description ?? null,
      runtime: info.runtime ?? null,
      version: info.version ?? null,
      os: info.os ?? null,
      ip_address: entry.peer.ipAddress,
      internal: false,
      status: entry.activeInvocations > 0 ? 'busy' : 'connected',
      connected_at_ms: entry.peer.connectedAtMs,
      function_count: functions.length,
      functions,
      active_invocations: entry.activeInvocations,
      latest_metrics: entry.latestMetrics,
      pid: info.pid ?? null,
      isolation: info.isolation ?? null,
    };
  }

  moduleRecord(module: ModuleWorker, functions: string[], version: string): WorkerRecord {
    return {
      id: module.name,
      name: module.name,
      description: null,
      runtime: 'engine',
      version,
      os: `${process.platform} (${process.arch})`,
      ip_address: null,
      internal: module.internal,
      status: 'available',
      connected_at_ms: module.startedAtMs,
      function_count: functions.length,
      functions,
      active_invocations: 0,
      latest_metrics: null,
      pid: process.pid,
      isolation: 'in-process',
    };
  }
}
