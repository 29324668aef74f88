import type { SocketAdapter, SocketFactory, SocketHandlers, WebSocketConstructor } from './socket.ts';

// Browser socket adapter over the standard WebSocket API. It never imports `ws`, so a bundler
// resolving the `browser` export condition ships none of Node's networking code.

const PING_FRAME = JSON.stringify({ type: 'ping' });
const OPEN = 1;

/**
 * Adapt any object with the standard WebSocket API (DOM, or `ws` used through `onmessage`).
 * Browsers cannot send ping control frames, so the heartbeat is the app-level `ping` message,
 * which the engine answers with `pong` (spec: engine-protocol §2.3.12).
 */
export function wrapStandardSocket(ws: WebSocket, handlers: SocketHandlers, handshakeTimeoutMs = 0): SocketAdapter {
  let finished = false;
  let handshakeTimer: ReturnType<typeof setTimeout> | undefined;
  const finish = (code: number, reason: string) => {
    if (finished) return;
    finished = true;
    if (handshakeTimer) clearTimeout(handshakeTimer);
    handlers.onClose(code, reason);
  };
  if (handshakeTimeoutMs > 0) {
    // the DOM API has no handshake deadline; ws has one (`handshakeTimeout`), so match it here
    handshakeTimer = setTimeout(() => {
      handlers.onError(new Error(`opening handshake timed out after ${handshakeTimeoutMs}ms`));
      adapter.terminate();
    }, handshakeTimeoutMs);
  }
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => {
    if (handshakeTimer) clearTimeout(handshakeTimer);
    handlers.onOpen();
  };
  ws.onmessage = (event: MessageEvent) => {
    handlers.onActivity();
    const data: unknown = event.data;
    if (typeof data === 'string') handlers.onMessage(data, false);
    else if (data instanceof ArrayBuffer) handlers.onMessage(new Uint8Array(data), true);
    else if (ArrayBuffer.isView(data)) handlers.onMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), true);
  };
  // the DOM hides the cause of socket errors; the close event that follows carries the code
  ws.onerror = () => handlers.onError(new Error('WebSocket error'));
  ws.onclose = (event: CloseEvent) => finish(event.code, event.reason);
  const adapter: SocketAdapter = {
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get isOpen() {
      return !finished && ws.readyState === OPEN;
    },
    send(data) {
      ws.send(data as string | Uint8Array<ArrayBuffer>);
    },
    heartbeat() {
      if (ws.readyState === OPEN) ws.send(PING_FRAME);
    },
    close(code = 1000, reason = '') {
      try {
        ws.close(code, reason);
      } catch {
        ws.close(); // browsers only accept 1000 and 3000-4999
      }
    },
    terminate() {
      // there is no abort in the DOM API: start the close and report it closed right away,
      // a dead peer would otherwise hold us until the browser gives up on the handshake
      try {
        ws.close();
      } catch {
        // already closing
      }
      finish(1006, 'terminated');
    },
  };
  return adapter;
}

/** Socket factory on the global WebSocket, or on `options.WebSocket` when given. */
export function browserSocketFactory(override?: WebSocketConstructor): SocketFactory {
  return (url, handlers, options) => {
    const Ctor = (override ?? globalThis.WebSocket) as WebSocketConstructor | undefined;
    if (!Ctor) throw new Error('no WebSocket implementation: pass options.WebSocket');
    return wrapStandardSocket(new Ctor(url) as WebSocket, handlers, options.handshakeTimeoutMs);
  };
}
