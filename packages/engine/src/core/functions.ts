import type { FunctionRecord, HttpInvocationRef } from '@eng/protocol';
import { isReservedFunctionId } from './reserved-ids.ts';

/** Context handed to an in-process function handler. */
export interface InvocationInfo {
  invocationId: string;
  functionId: string;
  /** Worker that made the call, when the call came over the bus. */
  callerWorkerId?: string;
  traceparent?: string;
  baggage?: string;
  metadata?: unknown;
  /**
   * The input belongs to this call alone (parsed from the caller's frame): a value taken out of it
   * can be handed on as an owned payload (`InvokeOptions.payloadOwned`).
   */
  inputOwned?: boolean;
  /** What was left of the caller's deadline when the call started (ms); none when it has none. */
  timeoutMs?: number;
}

export type InProcessHandler = (input: unknown, info: InvocationInfo) => unknown | Promise<unknown>;

export interface FunctionEntry {
  id: string;
  description: string | null;
  requestFormat: unknown;
  responseFormat: unknown;
  metadata: Record<string, unknown> | null;
  /** Owning bus connection; null for functions served by an engine module. */
  ownerWorkerId: string | null;
  /** Module name for in-process functions. */
  moduleName: string | null;
  handler?: InProcessHandler;
  invocation?: HttpInvocationRef;
  registeredAtMs: number;
  /** Set on a function another engine of the cluster serves (eng-cluster): where it runs. */
  remote?: RemoteOwner;
}

/** Where a function served by another engine of the cluster runs (modules/cluster). */
export interface RemoteOwner {
  /** The engine the next call goes to. */
  engineId: string;
  /** Every engine that serves the id, the routing choice first. */
  engineIds: string[];
  workerName: string;
  workerId: string | null;
  kind: FunctionRecord['kind'];
}

/**
 * The functions the other engines of a cluster serve, as eng-cluster keeps them. A local
 * registration always wins: the directory is asked only for an id no local entry has.
 */
export interface ClusterDirectory {
  /** This engine's id in the cluster. */
  readonly engineId: string;
  get(id: string): FunctionEntry | undefined;
  all(): Iterable<FunctionEntry>;
}

/**
 * Why a worker may not register `id`, or null when it may: an id an engine module serves now, or
 * one of the exact built-in ids of `reserved-ids.ts` (served by a module that may not be loaded, or
 * by iii's engine). Other ids, `engine::console::*` included, are a worker's (issue 26 item 1).
 */
export function reservedFunctionReason(id: string, current: FunctionEntry | undefined): string | null {
  if (current && current.ownerWorkerId === null) {
    return `function id "${id}" is served by the engine${current.moduleName ? ` module ${current.moduleName}` : ''}; a worker cannot register it (choose another id)`;
  }
  if (isReservedFunctionId(id))
    return `function id "${id}" is reserved: it is an engine built-in (served by an engine module, loaded or not, or by iii's engine); a worker cannot register it (choose another id)`;
  return null;
}

export class FunctionRegistry {
  private readonly functions = new Map<string, FunctionEntry>();
  /**
   * Worker registrations hidden by a later worker's registration of the same id, oldest first.
   * When the current owner unregisters or leaves, the newest one still held comes back, so a
   * rolling restart or a second replica never leaves the id unserved while someone offers it.
   */
  private readonly shadowed = new Map<string, FunctionEntry[]>();
  /** Bumped on every add/remove so `engine::functions-available` can tell cheaply whether the set changed. */
  version = 0;
  private readonly listeners = new Set<(change: { id: string; kind: 'added' | 'removed' }) => void>();

  set(entry: FunctionEntry): FunctionEntry | undefined {
    const previous = this.functions.get(entry.id);
    this.dropShadow(entry.id, entry.ownerWorkerId);
    if (previous && previous.ownerWorkerId !== null && previous.ownerWorkerId !== entry.ownerWorkerId) {
      const stack = this.shadowed.get(entry.id) ?? [];
      stack.push(previous);
      this.shadowed.set(entry.id, stack);
    }
    this.functions.set(entry.id, entry);
    this.version++;
    this.emit(entry.id, 'added');
    return previous;
  }

  /**
   * Remove `ownerWorkerId`'s registration of `id` (spec §2.3.4 / §2.8: only its owner's). When it
   * was the serving one, the newest hidden registration of another worker serves the id again.
   */
  removeIfOwner(id: string, ownerWorkerId: string | null): boolean {
    const entry = this.functions.get(id);
    if (!entry || entry.ownerWorkerId !== ownerWorkerId) return this.dropShadow(id, ownerWorkerId);
    const stack = this.shadowed.get(id);
    const restored = stack?.pop();
    if (stack && stack.length === 0) this.shadowed.delete(id);
    if (restored) {
      this.functions.set(id, restored);
      this.version++;
      this.emit(id, 'added');
      return true;
    }
    this.functions.delete(id);
    this.version++;
    this.emit(id, 'removed');
    return true;
  }

  /** Every registration of a worker, serving or hidden (it disconnected). */
  removeOwner(workerId: string): void {
    for (const [id, stack] of [...this.shadowed]) {
      if (stack.some((e) => e.ownerWorkerId === workerId)) this.dropShadow(id, workerId);
    }
    for (const entry of this.ownedBy(workerId)) this.removeIfOwner(entry.id, workerId);
  }

  private dropShadow(id: string, ownerWorkerId: string | null): boolean {
    const stack = this.shadowed.get(id);
    if (!stack) return false;
    const kept = stack.filter((e) => e.ownerWorkerId !== ownerWorkerId);
    if (kept.length === stack.length) return false;
    if (kept.length === 0) this.shadowed.delete(id);
    else this.shadowed.set(id, kept);
    return true;
  }

  /** Set by eng-cluster: the functions of the cluster's other engines. Never consulted for an id served here. */
  cluster?: ClusterDirectory;

  get(id: string): FunctionEntry | undefined {
    return this.functions.get(id);
  }
  /** This engine's entry for `id`, else the cluster's (a function another engine serves). */
  lookup(id: string): FunctionEntry | undefined {
    return this.functions.get(id) ?? this.cluster?.get(id);
  }
  /** This engine's functions, then the cluster's other ids (each id once, the local entry first). */
  *everywhere(): IterableIterator<FunctionEntry> {
    yield* this.functions.values();
    if (!this.cluster) return;
    for (const entry of this.cluster.all()) if (!this.functions.has(entry.id)) yield entry;
  }
  /** The cluster's view of `id` changed (eng-cluster): listeners hear it as they hear a local change. */
  clusterChanged(id: string, kind: 'added' | 'removed'): void {
    this.version++;
    this.emit(id, kind);
  }
  has(id: string): boolean {
    return this.functions.has(id);
  }
  all(): IterableIterator<FunctionEntry> {
    return this.functions.values();
  }
  ownedBy(workerId: string): FunctionEntry[] {
    const owned: FunctionEntry[] = [];
    for (const entry of this.functions.values()) if (entry.ownerWorkerId === workerId) owned.push(entry);
    return owned;
  }
  get size(): number {
    return this.functions.size;
  }

  onChange(listener: (change: { id: string; kind: 'added' | 'removed' }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  private emit(id: string, kind: 'added' | 'removed'): void {
    for (const listener of this.listeners) listener({ id, kind });
  }
}

/** Internal functions are engine built-ins (§3.2: `engine::*` except `engine::queue::*`, or metadata `internal: true`). */
export function isInternalFunction(entry: FunctionEntry): boolean {
  if (entry.metadata && entry.metadata.internal === true) return true;
  if (entry.id.startsWith('engine::') && !entry.id.startsWith('engine::queue::')) return true;
  return false;
}

export function functionKind(entry: FunctionEntry): FunctionRecord['kind'] {
  if (entry.remote) return entry.remote.kind;
  if (entry.invocation) return 'http';
  return entry.ownerWorkerId === null ? 'internal' : 'user';
}
