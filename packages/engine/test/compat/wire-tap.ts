/**
 * A WebSocket relay between an SDK and the engine that records the worker-bus frames it carries,
 * so compat tests can assert what the published SDK actually sent and received (e.g. that
 * 0.22.1 opens a reconnect with `reattach`, spec §2.3.2). Other paths (`/otel`, channels) are
 * relayed untouched and not recorded.
 */
import type { IncomingMessage } from 'node:http';
import { type RawData, WebSocket, WebSocketServer } from 'ws';

export interface TappedFrame {
  type: string;
  [key: string]: unknown;
}

/** One SDK connection to `/` through the tap. */
export interface TappedConnection {
  index: number;
  /** Frames the SDK sent to the engine, in order. */
  sent: TappedFrame[];
  /** Frames the engine sent to the SDK, in order. */
  received: TappedFrame[];
  client: WebSocket;
  upstream: WebSocket;
}

/** A relayed connection on another path (`/otel`, channels): counted, not recorded. */
export interface OtherConnection {
  path: string;
  open: boolean;
  binaryFrames: number;
}

export interface WireTap {
  url: string;
  connections: TappedConnection[];
  others: OtherConnection[];
  /**
   * Close the SDK side of a connection but keep the engine side open: to the engine, the old
   * connection still looks alive (a half-open socket, as after a network blip).
   */
  dropClientKeepUpstream(connection: TappedConnection): void;
  close(): Promise<void>;
}

function parse(data: RawData): TappedFrame | null {
  try {
    const value = JSON.parse(data.toString());
    return value && typeof value === 'object' && typeof value.type === 'string' ? value : null;
  } catch {
    return null;
  }
}

export async function startWireTap(upstreamBase: string): Promise<WireTap> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const address = wss.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const connections: TappedConnection[] = [];
  const others: OtherConnection[] = [];
  const keptOpen = new Set<WebSocket>();
  const all = new Set<WebSocket>();

  wss.on('connection', (client: WebSocket, req: IncomingMessage) => {
    const path = req.url ?? '/';
    const upstream = new WebSocket(upstreamBase + path, { perMessageDeflate: false });
    all.add(client);
    all.add(upstream);
    const recorded = path === '/' || path === '';
    const connection: TappedConnection | null = recorded ? { index: connections.length, sent: [], received: [], client, upstream } : null;
    if (connection) connections.push(connection);
    const other: OtherConnection | null = recorded ? null : { path, open: true, binaryFrames: 0 };
    if (other) {
      others.push(other);
      client.on('close', () => {
        other.open = false;
      });
    }
    // frames the SDK sends before the engine side is open wait here, in order
    const early: Array<{ data: RawData; isBinary: boolean }> = [];

    client.on('message', (data, isBinary) => {
      if (connection && !isBinary) {
        const frame = parse(data);
        if (frame) connection.sent.push(frame);
      }
      if (other && isBinary) other.binaryFrames++;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
      else early.push({ data, isBinary });
    });
    upstream.on('open', () => {
      for (const { data, isBinary } of early.splice(0)) upstream.send(data, { binary: isBinary });
    });
    upstream.on('message', (data, isBinary) => {
      if (connection && !isBinary) {
        const frame = parse(data);
        if (frame) connection.received.push(frame);
      }
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    });
    // either side ending ends the other, unless a test deliberately keeps the engine side open
    client.on('close', () => {
      if (!keptOpen.has(upstream)) upstream.terminate();
    });
    upstream.on('close', () => client.terminate());
    upstream.on('error', () => client.terminate());
    client.on('error', () => upstream.terminate());
  });

  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    others,
    dropClientKeepUpstream(connection) {
      keptOpen.add(connection.upstream);
      connection.client.terminate();
    },
    async close() {
      for (const socket of all) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
