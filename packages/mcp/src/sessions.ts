import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { LoggingLevel, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from './builtins.ts';

// Every connected MCP client is a session (one for stdio, one per Mcp-Session-Id over HTTP).
// The hub fans server-side events out to them: tools/list_changed, resources/updated, log
// messages (spec 2025-06-18 utilities/logging) and progress (basic/utilities/progress).

export const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
export const DEFAULT_LOG_LEVEL: LoggingLevel = 'info';

export interface McpSession {
  readonly id: string;
  readonly transport: Transport;
  readonly server: Server;
  protocolVersion?: string;
  /** True once `initialize` was answered (stdio gate, spec basic/lifecycle). */
  initialized: boolean;
  logLevel: LoggingLevel;
  subscriptions: Set<string>;
  /** UTF-16 length of the subscribed URIs: what subscriptions add to the session's memory. */
  subscriptionBytes: number;
  lastActiveMs: number;
  /**
   * Over HTTP: end the SSE stream that carries `requestId`'s answer now (SEP-1699 polling), the
   * client resuming with `Last-Event-ID` after `retryMs`. Undefined when done, else why not.
   */
  releaseStream?: (requestId: RequestId, retryMs: number) => string | undefined;
  /**
   * 2026-07-28 requests: a request to the client needed a capability it did not declare; the
   * request is then answered with -32021 (MissingRequiredClientCapability).
   */
  onMissingCapability?: (capability: string) => void;
  /** 2026-07-28 with the tasks extension: continue this call as a task (`task_function`); why not, when it cannot. */
  escalate?: () => string | undefined;
}

/** What a 2026-07-28 `subscriptions/listen` stream asked for (spec basic/patterns/subscriptions). */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks extension: `notifications/tasks` for these task ids. */
  taskIds?: string[];
}

export interface Listener {
  filter: SubscriptionFilter;
  send(method: string, params: Record<string, unknown>): void;
}

/** Per-session subscription bounds, so a session's memory stays bounded too. */
export const MAX_SUBSCRIPTIONS = 256;
export const MAX_SUBSCRIPTION_URI = 2048;

/** One tools/call in flight, as the function it runs sees it: an opaque key in `metadata.mcp.token`. */
export interface CallSlot {
  session: McpSession;
  requestId: RequestId;
  /** The client's `_meta.progressToken`, when it asked for progress. */
  clientToken?: string | number;
  last: number;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
}

export class SessionHub {
  private readonly sessions = new Map<string, McpSession>();
  private readonly calls = new Map<string, CallSlot>();
  private readonly listeners = new Set<Listener>();

  /** A 2026-07-28 subscription stream: the notifications its filter names, until `unlisten`. */
  listen(filter: SubscriptionFilter, send: Listener['send']): Listener {
    const listener = { filter, send };
    this.listeners.add(listener);
    return listener;
  }

  unlisten(listener: Listener): void {
    this.listeners.delete(listener);
  }

  private tell(key: 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged', method: string): void {
    for (const listener of this.listeners) if (listener.filter[key]) listener.send(method, {});
  }

  add(session: McpSession): void {
    this.sessions.set(session.id, session);
  }

  remove(session: McpSession): void {
    this.sessions.delete(session.id);
    for (const [token, slot] of this.calls) if (slot.session === session) this.calls.delete(token);
  }

  all(): McpSession[] {
    return [...this.sessions.values()];
  }

  /** Sessions and 2026-07-28 subscription streams: who may be told about changes. */
  get size(): number {
    return this.sessions.size + this.listeners.size;
  }

  /** URIs some session is subscribed to. */
  subscribedUris(): Set<string> {
    const uris = new Set<string>();
    for (const session of this.sessions.values()) for (const uri of session.subscriptions) uris.add(uri);
    for (const listener of this.listeners) for (const uri of listener.filter.resourceSubscriptions ?? []) uris.add(uri);
    return uris;
  }

  toolsChanged(): void {
    this.tell('toolsListChanged', 'notifications/tools/list_changed');
    for (const session of this.sessions.values()) {
      if (session.initialized) void session.server.sendToolListChanged().catch(() => undefined);
    }
  }

  resourcesListChanged(): void {
    this.tell('resourcesListChanged', 'notifications/resources/list_changed');
    for (const session of this.sessions.values()) {
      if (session.initialized) void session.server.sendResourceListChanged().catch(() => undefined);
    }
  }

  promptsListChanged(): void {
    this.tell('promptsListChanged', 'notifications/prompts/list_changed');
    for (const session of this.sessions.values()) {
      if (session.initialized) void session.server.sendPromptListChanged().catch(() => undefined);
    }
  }

  /** Tasks extension (SEP-2663): a task's state changed; its listeners get the full task. */
  taskChanged(taskId: string, task: Record<string, unknown>): void {
    for (const listener of this.listeners) {
      if (listener.filter.taskIds?.includes(taskId)) listener.send('notifications/tasks', task);
    }
  }

  resourceUpdated(uri: string): void {
    for (const listener of this.listeners) {
      if (listener.filter.resourceSubscriptions?.includes(uri)) listener.send('notifications/resources/updated', { uri });
    }
    for (const session of this.sessions.values()) {
      if (session.initialized && session.subscriptions.has(uri)) {
        void session.server.sendResourceUpdated({ uri }).catch(() => undefined);
      }
    }
  }

  /** `notifications/message` to every session whose level lets it through; returns how many got it. */
  log(level: LoggingLevel, data: unknown, logger?: string, only?: { session: McpSession; requestId: RequestId }): number {
    const targets = only ? [only.session] : [...this.sessions.values()];
    let delivered = 0;
    for (const session of targets) {
      if (!session.initialized || LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(session.logLevel)) continue;
      const params = logger ? { level, data, logger } : { level, data };
      void session.server
        .notification({ method: 'notifications/message', params }, only ? { relatedRequestId: only.requestId } : undefined)
        .catch(() => undefined);
      delivered++;
    }
    return delivered;
  }

  /** A slot for one call in flight; the opaque key goes to the function, never the client's token. */
  openCall(session: McpSession, requestId: RequestId, signal: AbortSignal, clientToken?: string | number): OpenCall {
    const key = randomUUID();
    this.calls.set(key, { session, requestId, clientToken, signal, last: Number.NEGATIVE_INFINITY });
    return new OpenCall(this.calls, key, this.cancelledCalls);
  }

  /** Calls the client cancelled, remembered a while so a function still running hears why its token is void. */
  private readonly cancelledCalls = new Map<string, number>();

  /** Whether a token names a call the client cancelled (within the last CANCELLED_MEMORY_MS). */
  wasCancelled(key: string): boolean {
    const at = this.cancelledCalls.get(key);
    return at !== undefined && Date.now() - at < CANCELLED_MEMORY_MS;
  }

  /** The call behind a key, while it runs. */
  call(key: string): CallSlot | undefined {
    return this.calls.get(key);
  }

  /** spec basic/utilities/progress: values must increase; nothing after the request finished. */
  reportProgress(key: string, progress: number, total?: number, message?: string): { ok: true } | { ok: false; error: string } {
    const slot = this.calls.get(key);
    if (!slot || slot.signal.aborted) {
      if (slot || this.wasCancelled(key)) return { ok: false, error: CANCELLED_TEXT };
      return { ok: false, error: 'unknown or finished progress token' };
    }
    if (slot.clientToken === undefined)
      return { ok: false, error: 'the client did not ask for progress on this call (no _meta.progressToken)' };
    if (!(progress > slot.last)) return { ok: false, error: `progress must increase (last ${slot.last}, got ${progress})` };
    slot.last = progress;
    const params: Record<string, unknown> = { progressToken: slot.clientToken, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    void slot.session.server
      .notification({ method: 'notifications/progress', params: params as never }, { relatedRequestId: slot.requestId })
      .catch(() => undefined);
    return { ok: true };
  }
}

/**
 * A running tools/call's key, until `close()`. A class rather than a closure per call: under tsx
 * (esbuild keepNames) every named closure costs an Object.defineProperty when it is made.
 */
export class OpenCall {
  constructor(
    private readonly calls: Map<string, CallSlot>,
    readonly key: string,
    private readonly cancelled?: Map<string, number>,
  ) {}
  close(): void {
    const slot = this.calls.get(this.key);
    this.calls.delete(this.key);
    if (slot?.signal.aborted && this.cancelled) {
      if (this.cancelled.size >= CANCELLED_MEMORY) this.cancelled.delete(this.cancelled.keys().next().value as string);
      this.cancelled.set(this.key, Date.now());
    }
  }
}

/** How many cancelled calls, and for how long, a late log or progress call is told about. */
const CANCELLED_MEMORY = 1000;
const CANCELLED_MEMORY_MS = 10 * 60_000;
export const CANCELLED_TEXT = 'the client cancelled this tool call: nothing more reaches it';
