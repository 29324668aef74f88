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
}

/** Per-session subscription bounds, so a session's memory stays bounded too. */
export const MAX_SUBSCRIPTIONS = 256;
export const MAX_SUBSCRIPTION_URI = 2048;

interface ProgressSlot {
  session: McpSession;
  requestId: RequestId;
  clientToken: string | number;
  last: number;
}

export class SessionHub {
  private readonly sessions = new Map<string, McpSession>();
  private readonly progress = new Map<string, ProgressSlot>();

  add(session: McpSession): void {
    this.sessions.set(session.id, session);
  }

  remove(session: McpSession): void {
    this.sessions.delete(session.id);
    for (const [token, slot] of this.progress) if (slot.session === session) this.progress.delete(token);
  }

  all(): McpSession[] {
    return [...this.sessions.values()];
  }

  get size(): number {
    return this.sessions.size;
  }

  /** URIs some session is subscribed to. */
  subscribedUris(): Set<string> {
    const uris = new Set<string>();
    for (const session of this.sessions.values()) for (const uri of session.subscriptions) uris.add(uri);
    return uris;
  }

  toolsChanged(): void {
    for (const session of this.sessions.values()) {
      if (session.initialized) void session.server.sendToolListChanged().catch(() => undefined);
    }
  }

  resourceUpdated(uri: string): void {
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

  /** A progress slot for one in-flight request; the opaque key goes to the function, never the client's token. */
  openProgress(session: McpSession, requestId: RequestId, clientToken: string | number): { key: string; close(): void } {
    const key = randomUUID();
    this.progress.set(key, { session, requestId, clientToken, last: Number.NEGATIVE_INFINITY });
    return { key, close: () => this.progress.delete(key) };
  }

  /** The session and request behind a progress key (for log messages related to a call). */
  slot(key: string): { session: McpSession; requestId: RequestId } | undefined {
    return this.progress.get(key);
  }

  /** spec basic/utilities/progress: values must increase; nothing after the request finished. */
  reportProgress(key: string, progress: number, total?: number, message?: string): { ok: true } | { ok: false; error: string } {
    const slot = this.progress.get(key);
    if (!slot) return { ok: false, error: 'unknown or finished progress token' };
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
