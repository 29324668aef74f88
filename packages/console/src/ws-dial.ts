import { createHash } from 'node:crypto';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { unescape as unescapeUserinfo } from 'node:querystring';
import { connect as tlsConnect } from 'node:tls';

/**
 * The upstream half of the proxy's handshake: a raw HTTP/1.1 upgrade request to the engine carrying
 * the browser's own `Sec-WebSocket-Key`, so the engine's 101 (its `Sec-WebSocket-Accept`) is valid
 * for the browser and the two TCP connections can be spliced byte for byte afterwards.
 */

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const MAX_RESPONSE_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

export const UPSTREAM_PROTOCOLS = new Set(['ws:', 'wss:', 'http:', 'https:']);

export interface DialRequest {
  url: URL;
  /** The browser's `Sec-WebSocket-Key` and `Sec-WebSocket-Version`, forwarded as they are. */
  key: string;
  version: string;
  /** The browser's `Sec-WebSocket-Protocol` offer, if any. */
  protocol?: string;
  timeoutMs: number;
}

export interface DialedUpstream {
  socket: Socket;
  /** The subprotocol the engine picked, if any. */
  protocol?: string;
  /** Bytes that followed the 101 in the same read: the engine's first frames. */
  rest: Buffer;
}

export function acceptFor(key: string): string {
  return createHash('sha1')
    .update(key + WS_GUID)
    .digest('base64');
}

/** The HTTP/1.1 upgrade request for `request.url` (path and query, its Host, Basic auth from its userinfo). */
export function upgradeRequest(request: DialRequest): string {
  const { url } = request;
  let head =
    `GET ${url.pathname || '/'}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    `Sec-WebSocket-Key: ${request.key}\r\nSec-WebSocket-Version: ${request.version}\r\n`;
  if (request.protocol) head += `Sec-WebSocket-Protocol: ${request.protocol}\r\n`;
  // no Sec-WebSocket-Extensions: frames stay plain, so the proxy can read their headers and inject a close
  if (url.username || url.password) {
    // userinfo is percent-encoded in a URL; the credentials are not (as `ws` does it)
    head += `Authorization: Basic ${Buffer.from(`${unescapeUserinfo(url.username)}:${unescapeUserinfo(url.password)}`).toString('base64')}\r\n`;
  }
  return `${head}\r\n`;
}

/** Parse the engine's response head; an error text, or the picked subprotocol. */
function checkResponse(head: string, key: string): { error: string } | { protocol?: string } {
  const lines = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!status) return { error: 'invalid handshake response' };
  if (status[1] !== '101') return { error: `HTTP ${status[1]}` };
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (headers.get('upgrade')?.toLowerCase() !== 'websocket') return { error: 'invalid Upgrade header' };
  if (headers.get('sec-websocket-accept') !== acceptFor(key)) return { error: 'invalid Sec-WebSocket-Accept header' };
  if (headers.has('sec-websocket-extensions')) return { error: 'unrequested Sec-WebSocket-Extensions' };
  const protocol = headers.get('sec-websocket-protocol');
  return protocol ? { protocol } : {};
}

/**
 * Dial the engine and complete its handshake; `done` is called exactly once, unless `abort()` comes
 * first. Failures are short texts for a close reason: an errno code, `HTTP 403`, `handshake timed out`.
 */
export function dialUpstream(request: DialRequest, done: (error: string | null, upstream?: DialedUpstream) => void): { abort(): void } {
  const { url } = request;
  const secure = url.protocol === 'wss:' || url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port) || (secure ? 443 : 80);
  const socket = secure
    ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] })
    : netConnect({ host, port });
  socket.setNoDelay(true);
  let settled = false;
  let received: Buffer = Buffer.alloc(0);

  const finish = (error: string | null, result?: DialedUpstream) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('error', onError);
    socket.off('close', onClose);
    if (error !== null) socket.destroy();
    done(error, result);
  };
  const onData = (chunk: Buffer) => {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    const end = received.indexOf(HEAD_END);
    if (end < 0) {
      if (received.length > MAX_RESPONSE_HEAD) finish('invalid handshake response');
      return;
    }
    const checked = checkResponse(received.toString('latin1', 0, end), request.key);
    if ('error' in checked) finish(checked.error);
    else finish(null, { socket, protocol: checked.protocol, rest: received.subarray(end + HEAD_END.length) });
  };
  const onError = (err: NodeJS.ErrnoException) => finish(err.code ?? err.message);
  const onClose = () => finish('connection closed during the handshake');
  const timer = setTimeout(() => finish('handshake timed out'), request.timeoutMs);

  socket.on('data', onData);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.write(upgradeRequest(request));
  return {
    abort() {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
    },
  };
}
