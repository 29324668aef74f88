import type { FunctionRecord, HttpInvocationRef } from '@eng/protocol';

/** Context handed to an in-process function handler. */
export interface InvocationInfo {
  invocationId: string;
  functionId: string;
  /** Worker that made the call, when the call came over the bus. */
  callerWorkerId?: string;
  traceparent?: string;
  baggage?: string;
  metadata?: unknown;
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
}

export class FunctionRegistry {
  private readonly functions = new Map<string, FunctionEntry>();
  /** Bumped on every add/remove so `engine::functions-available` can tell cheaply whether the set changed. */
  version = 0;
  private readonly listeners = new Set<(change: { id: string; kind: 'added' | 'removed' }) => void>();

  set(entry: FunctionEntry): FunctionEntry | undefined {
    const previous = this.functions.get(entry.id);
    this.functions.set(entry.id, entry);
    this.version++;
    this.emit(entry.id, 'added');
    return previous;
  }

  /** Remove `id` only if `ownerWorkerId` still owns it (spec §2.3.4 / §2.8: a newer owner survives). */
  removeIfOwner(id: string, ownerWorkerId: string | null): boolean {
    const entry = this.functions.get(id);
    if (!entry || entry.ownerWorkerId !== ownerWorkerId) return false;
    this.functions.delete(id);
    this.version++;
    this.emit(id, 'removed');
    return true;
  }

  get(id: string): FunctionEntry | undefined {
    return this.functions.get(id);
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
  if (entry.invocation) return 'http';
  return entry.ownerWorkerId === null ? 'internal' : 'user';
}
