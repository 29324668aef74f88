/**
 * The only thing the client knows about a WebSocket. One adapter per runtime (socket-node.ts on
 * `ws`, socket-browser.ts on the global WebSocket) keeps the client and channels runtime-agnostic.
 */

export type Frame = string | Uint8Array;

export interface SocketHandlers {
  onOpen(): void;
  /** A data frame. Text frames arrive as strings, binary frames as bytes. */
  onMessage(data: Frame, isBinary: boolean): void;
  /** Any inbound traffic, control frames included: feeds the idle detector (spec §2.10). */
  onActivity(): void;
  /** Called once, whether the close was clean, an error, or a failed handshake. */
  onClose(code: number, reason: string): void;
  onError(error: Error): void;
}

export interface SocketAdapter {
  /** Bytes queued for sending but not yet handed to the network; writers wait on it (backpressure). */
  readonly bufferedAmount: number;
  readonly isOpen: boolean;
  send(data: Frame): void;
  /** Keep-alive probe: a ping control frame on Node, an app-level `{"type":"ping"}` in browsers. */
  heartbeat(): void;
  close(code?: number, reason?: string): void;
  /** Drop the connection without a close handshake (dead peer). */
  terminate(): void;
  /** Stop / restart reading from the network, where the runtime allows it (Node only). */
  pause?(): void;
  resume?(): void;
}

export interface SocketOptions {
  /** Upgrade request headers (Node only; browsers cannot set them). */
  headers?: Record<string, string>;
  handshakeTimeoutMs: number;
}

export type SocketFactory = (url: string, handlers: SocketHandlers, options: SocketOptions) => SocketAdapter;

/**
 * A WebSocket constructor supplied by the user (`options.WebSocket`): the `ws` class, the DOM one,
 * or anything shaped like either. Its argument list differs between the two, hence `any`.
 */
export type WebSocketConstructor = new (url: string, ...rest: any[]) => object;

export const HANDSHAKE_TIMEOUT_MS = 10_000;
