import { decodeMessage, EngError, ErrorCode, type Message } from '@eng/protocol';
import { backoffDelay, mayRetry, type ReconnectPolicy } from './backoff.ts';
import { printableUrl } from './logger.ts';
import { HANDSHAKE_TIMEOUT_MS, type SocketAdapter, type SocketFactory, type SocketHandlers } from './socket.ts';
import type { Logger } from './types.ts';

// One logical connection to the worker bus across many sockets: open, decode, heartbeat, and
// reconnect with backoff (spec: engine-protocol §2.9, §2.10). What to send on open and what to do
// with a message is the client's business.

export interface ConnectionSettings {
  url: string;
  createSocket: SocketFactory;
  headers?: Record<string, string>;
  policy: ReconnectPolicy;
  heartbeatMs: number;
  logger: Logger;
}

export interface ConnectionEvents {
  onOpen(): void;
  onMessage(message: Message): void;
  onClosed(code: number, reason: string, wasOpen: boolean): void;
  onReconnecting(attempt: number, delayMs: number): void;
  /** Reconnecting gave up, or cannot start (bad URL). Terminal. */
  onFailed(error: EngError): void;
}

type State = 'connecting' | 'open' | 'failed' | 'closing' | 'closed';

const decoder = new TextDecoder();

export class Connection {
  private state: State = 'connecting';
  private socket?: SocketAdapter;
  private socketGeneration = 0;
  private attempt = 0;
  private everOpened = false;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private heartbeatTimer?: ReturnType<typeof setInterval>;
  private idleTimer?: ReturnType<typeof setTimeout>;
  private idleLater?: unknown;
  private lastActivity = 0;
  /** When the first ping after the last inbound frame went out (0: none outstanding). */
  private unansweredSince = 0;
  private closing?: Promise<void>;
  private readonly closeWaiters: (() => void)[] = [];

  constructor(
    private readonly settings: ConnectionSettings,
    private readonly events: ConnectionEvents,
  ) {}

  /** Changes with every socket, so work begun on one socket can tell it outlived it. */
  get generation(): number {
    return this.socketGeneration;
  }

  get isOpen(): boolean {
    return this.state === 'open' && this.socket?.isOpen === true;
  }

  get isTerminal(): boolean {
    return this.state === 'failed' || this.closing !== undefined;
  }

  start(): void {
    this.openSocket();
  }

  /** Sends one frame; false when there is no open socket (the caller decides whether to queue). */
  sendText(text: string): boolean {
    if (!this.isOpen || !this.socket) return false;
    try {
      this.socket.send(text);
      return true;
    } catch (err) {
      this.settings.logger.warn('sending a frame failed', err);
      return false;
    }
  }

  /** Sends one binary frame (telemetry); false when there is no open socket. */
  sendBinary(bytes: Uint8Array): boolean {
    if (!this.isOpen || !this.socket) return false;
    try {
      this.socket.send(bytes);
      return true;
    } catch (err) {
      this.settings.logger.warn('sending a frame failed', err);
      return false;
    }
  }

  /** Stop reconnecting and close the socket; resolves once it is closed. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.state = 'closing';
    this.clearTimers();
    const socket = this.socket;
    this.closing = new Promise<void>((resolve) => {
      if (!socket) {
        this.state = 'closed';
        resolve();
        return;
      }
      // a peer that never answers the close handshake must not hold close() forever
      const force = setTimeout(() => socket.terminate(), 1000);
      this.closeWaiters.push(() => {
        clearTimeout(force);
        resolve();
      });
      socket.close(1000, 'client closed');
    });
    return this.closing;
  }

  private openSocket(): void {
    if (this.closing) return;
    this.state = 'connecting';
    const generation = ++this.socketGeneration;
    const live = () => generation === this.socketGeneration;
    let lastError: Error | undefined;
    const handlers: SocketHandlers = {
      onOpen: () => {
        if (live()) this.onOpen();
      },
      onMessage: (data) => {
        if (live()) this.onFrame(data);
      },
      onActivity: () => {
        this.lastActivity = Date.now();
        this.unansweredSince = 0;
      },
      onError: (err) => {
        if (!live()) return;
        lastError = err;
        this.settings.logger.debug(`socket error: ${err.message}`);
      },
      onClose: (code, reason) => {
        if (live()) this.onClose(code, reason || lastError?.message || '');
      },
    };
    try {
      this.socket = this.settings.createSocket(this.settings.url, handlers, {
        headers: this.settings.headers,
        handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      });
    } catch (err) {
      // a malformed URL will not get better by retrying
      this.socket = undefined;
      this.fail(new EngError(ErrorCode.NotConnected, `cannot connect to ${printableUrl(this.settings.url)}: ${(err as Error).message}`));
    }
  }

  private onOpen(): void {
    if (this.closing) return;
    this.state = 'open';
    this.attempt = 0;
    this.everOpened = true;
    this.startHeartbeat();
    this.events.onOpen();
  }

  private onFrame(data: string | Uint8Array): void {
    const decoded = decodeMessage(typeof data === 'string' ? data : decoder.decode(data));
    if (!decoded) return;
    if (!decoded.ok) {
      // spec §2.2 applies both ways: a frame we cannot read is dropped, the connection stays
      this.settings.logger.warn(`dropped a frame from the engine: ${decoded.reason}`);
      return;
    }
    this.events.onMessage(decoded.message);
  }

  private onClose(code: number, reason: string): void {
    const wasOpen = this.state === 'open';
    this.socketGeneration++; // anything still arriving from this socket is ignored
    this.socket = undefined;
    this.clearTimers();
    this.events.onClosed(code, reason, wasOpen);
    if (this.closing) {
      this.state = 'closed';
      for (const waiter of this.closeWaiters.splice(0)) waiter();
      return;
    }
    if (wasOpen) this.settings.logger.warn(`connection to the engine lost (${code}${reason ? `: ${reason}` : ''}); reconnecting`);
    this.scheduleReconnect(reason);
  }

  private scheduleReconnect(reason: string): void {
    if (!mayRetry(this.settings.policy, this.attempt)) {
      const why = reason ? `: ${reason}` : '';
      this.fail(new EngError(ErrorCode.NotConnected, `cannot reach the engine at ${printableUrl(this.settings.url)}${why}`));
      return;
    }
    const delayMs = backoffDelay(this.settings.policy, this.attempt);
    this.attempt++;
    this.state = 'connecting';
    this.settings.logger.debug(`reconnecting in ${delayMs}ms (attempt ${this.attempt})`);
    this.events.onReconnecting(this.attempt, delayMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.openSocket();
    }, delayMs);
  }

  private fail(error: EngError): void {
    this.state = 'failed';
    // before the first open the caller learns it from ready(); afterwards it is news worth a line
    if (this.everOpened) this.settings.logger.warn(error.message);
    else this.settings.logger.debug(error.message);
    this.events.onFailed(error);
  }

  // spec §2.10: ping every heartbeatMs; a connection silent for 3x that is dead, whatever TCP says
  private startHeartbeat(): void {
    const interval = this.settings.heartbeatMs;
    if (interval <= 0) return;
    this.lastActivity = Date.now();
    this.unansweredSince = 0;
    const ping = () => {
      if (this.unansweredSince === 0) this.unansweredSince = Date.now();
      this.socket?.heartbeat();
    };
    this.heartbeatTimer = setInterval(ping, interval);
    const idleLimit = interval * 3;
    // Silence is the engine's fault only if it was asked: our own process may have stalled (a long
    // synchronous task, a loaded machine) and sent no ping, or not yet read the pong waiting in the
    // socket. So the connection is dropped only after 3 intervals without an inbound frame AND 2
    // intervals since a ping went out unanswered, judged after the pending I/O has been read.
    const check = () => {
      const now = Date.now();
      const idle = now - this.lastActivity;
      if (idle >= idleLimit && this.unansweredSince === 0) ping();
      const asked = this.unansweredSince === 0 ? 0 : now - this.unansweredSince;
      if (idle < idleLimit || asked < interval * 2) {
        this.idleTimer = setTimeout(check, Math.max(idleLimit - idle, interval * 2 - asked, 1));
        return;
      }
      // after the pending I/O: a frame already in the socket is read first
      this.idleLater = later.run(() => {
        this.idleLater = undefined;
        const silent = Date.now() - this.lastActivity;
        if (silent < idleLimit) {
          this.idleTimer = setTimeout(check, idleLimit - silent);
          return;
        }
        this.settings.logger.warn(`nothing received from the engine for ${silent}ms: reconnecting`);
        this.socket?.terminate();
      });
    };
    this.idleTimer = setTimeout(check, idleLimit);
  }

  private clearTimers(): void {
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.idleTimer);
    if (this.idleLater !== undefined) later.cancel(this.idleLater);
    this.idleLater = undefined;
    this.reconnectTimer = undefined;
    this.heartbeatTimer = undefined;
    this.idleTimer = undefined;
  }
}

/**
 * Run `fn` once the I/O already waiting has been handled. Node: setImmediate runs after the poll
 * phase. Browser: a zero-delay timer task queues behind the message events already waiting.
 */
const later: { run(fn: () => void): unknown; cancel(handle: unknown): void } =
  typeof setImmediate === 'function'
    ? { run: (fn) => setImmediate(fn), cancel: (h) => clearImmediate(h as ReturnType<typeof setImmediate>) }
    : { run: (fn) => setTimeout(fn, 0), cancel: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) };
