import { type RawData, WebSocket } from 'ws';
import type { SocketAdapter, SocketFactory, SocketHandlers, WebSocketConstructor } from './socket.ts';
import { wrapStandardSocket } from './socket-browser.ts';

// Node socket adapter on `ws`: real ping control frames for the heartbeat (spec: engine-protocol
// §2.10), upgrade headers (§2.1), and pause/resume so a slow channel reader pushes back on TCP.

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}

function isWsSocket(value: object): value is WebSocket {
  const v = value as Partial<WebSocket>;
  return typeof v.on === 'function' && typeof v.ping === 'function' && typeof v.terminate === 'function';
}

export function wrapWsSocket(ws: WebSocket, handlers: SocketHandlers): SocketAdapter {
  let finished = false;
  const finish = (code: number, reason: string) => {
    if (finished) return;
    finished = true;
    handlers.onClose(code, reason);
  };
  ws.on('open', () => handlers.onOpen());
  ws.on('message', (data: RawData, isBinary: boolean) => {
    handlers.onActivity();
    if (isBinary) handlers.onMessage(toBytes(data), true);
    else handlers.onMessage(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(toBytes(data)).toString('utf8'), false);
  });
  ws.on('ping', () => handlers.onActivity());
  ws.on('pong', () => handlers.onActivity());
  // an 'error' without a listener would throw out of the EventEmitter and crash the process
  ws.on('error', (err: Error) => handlers.onError(err));
  ws.on('close', (code: number, reason: Buffer) => finish(code, reason.toString('utf8')));
  return {
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get isOpen() {
      return !finished && ws.readyState === WebSocket.OPEN;
    },
    send(data) {
      ws.send(data);
    },
    heartbeat() {
      if (ws.readyState === WebSocket.OPEN) ws.ping();
    },
    close(code = 1000, reason = '') {
      ws.close(code, reason);
    },
    terminate() {
      ws.terminate();
      finish(1006, 'terminated');
    },
    pause() {
      ws.pause();
    },
    resume() {
      ws.resume();
    },
  };
}

/** Socket factory on `ws`, or on `options.WebSocket` when given (ws-like or DOM-like). */
export function nodeSocketFactory(override?: WebSocketConstructor): SocketFactory {
  return (url, handlers, options) => {
    const Ctor = override ?? WebSocket;
    const socket = new Ctor(url, {
      headers: options.headers,
      handshakeTimeout: options.handshakeTimeoutMs,
      // the engine does not negotiate compression (bus/server.ts); do not offer it
      perMessageDeflate: false,
    });
    if (isWsSocket(socket)) return wrapWsSocket(socket, handlers);
    return wrapStandardSocket(socket as globalThis.WebSocket, handlers, options.handshakeTimeoutMs);
  };
}
