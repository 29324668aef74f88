import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { OriginGate } from '../../bus/origins.ts';
import { capConnections, defaultMaxConnections, Heartbeat, headerDeadline } from '../../bus/socket-limits.ts';
import { jsonTooDeep, tooDeepMessage } from '../../core/json-limits.ts';
import type { ModuleContext } from '../../core/module.ts';
import { SocketMessage } from './schemas.ts';
import type { StreamService } from './stream-service.ts';
import { type JoinLeaveEvent, type StreamMessage, type StreamTriggers, streamMessage } from './triggers.ts';

export interface StreamsAddress {
  host: string;
  port: number;
  url: string;
}

interface Subscription {
  socket: ClientSocket;
  subscriptionId: string;
  streamName: string;
  groupId: string;
  id?: string;
  /** Messages that arrived while the join's sync was being read; sent right after it. */
  buffered: string[] | null;
}

interface ClientSocket {
  ws: WebSocket;
  context?: unknown;
  subscriptions: Map<string, Subscription>;
  /** Messages of one socket are handled one after another, in arrival order. */
  queue: Promise<void>;
}

/**
 * The streams WebSocket (spec §6.2): clients `join` a stream group (or one item), get a `sync`
 * with the current data, then every create/update/delete/event that matches. Only `/` is served.
 */
export class StreamsSocketServer {
  private server?: Server;
  private wss?: WebSocketServer;
  private readonly sockets = new Set<ClientSocket>();
  /** `streamName\0groupId` → subscriptions, for delivery without scanning every socket. */
  private readonly byGroup = new Map<string, Set<Subscription>>();
  private heartbeat?: Heartbeat;

  constructor(
    private readonly ctx: ModuleContext<{
      host: string;
      port: number;
      auth_function?: string;
      allowed_origins: string[];
      handshake_timeout_ms: number;
      max_connections?: number;
      heartbeat_interval_ms: number;
      heartbeat_timeout_ms: number;
    }>,
    private readonly service: StreamService,
    private readonly triggers: StreamTriggers,
  ) {}

  async listen(): Promise<StreamsAddress> {
    const { host, port } = this.ctx.config;
    // clients only send join/leave: a large frame is a mistake or an attack
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });
    this.wss = wss;
    const server = createServer(headerDeadline(this.ctx.config.handshake_timeout_ms), (_req, res) => {
      res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
      res.end(
        JSON.stringify({ error: { code: 'UPGRADE_REQUIRED', message: 'this is the eng streams socket: connect with a WebSocket to /' } }),
      );
    });
    const { max_connections, heartbeat_interval_ms, heartbeat_timeout_ms } = this.ctx.config;
    capConnections(server, max_connections ?? defaultMaxConnections(), 'streams socket', 'max_connections of eng-stream', (m) =>
      this.ctx.log.warn(m),
    );
    this.heartbeat = new Heartbeat(heartbeat_interval_ms, heartbeat_timeout_ms);
    // a page from an unlisted origin is refused; the consoles' /ws/streams proxies dial without an Origin
    const gate = new OriginGate(this.ctx.config.allowed_origins, 'eng streams socket', 'eng-stream', (m) => this.ctx.log.warn(m));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!gate.admit(req, socket)) return;
      const path = new URL(req.url ?? '/', 'http://streams').pathname;
      if (path !== '/') {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nNot Found');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        this.heartbeat?.watch(ws, socket);
        this.accept(ws, req);
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    return { host, port: actualPort, url: `ws://${host}:${actualPort}` };
  }

  /** Send a change to every matching subscriber (spec §6.2 delivery rule). */
  deliver(message: StreamMessage): void {
    const subscribers = this.byGroup.get(groupKey(message.streamName, message.groupId));
    if (!subscribers?.size) return;
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      // a stored value the engine cannot write out (another process wrote it to the shared store)
      this.ctx.log.warn(`streams socket: change of ${message.streamName}/${message.groupId} not delivered: ${(err as Error).message}`);
      return;
    }
    for (const sub of subscribers) {
      // an item subscriber gets only its item; a group subscriber gets everything of the group
      if (sub.id !== undefined && sub.id !== message.id) continue;
      if (sub.buffered) sub.buffered.push(text);
      else sub.socket.ws.send(text);
    }
  }

  async close(): Promise<void> {
    this.heartbeat?.stop();
    for (const client of this.sockets) client.ws.close(1001, 'engine shutting down');
    await new Promise((r) => setTimeout(r, 50));
    for (const client of this.sockets) client.ws.terminate();
    this.wss?.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(ws: WebSocket, req: IncomingMessage): void {
    const client: ClientSocket = { ws, subscriptions: new Map(), queue: Promise.resolve() };
    this.sockets.add(client);
    // messages wait for authentication, so joins always see the context
    client.queue = this.authenticate(client, req);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      if (jsonTooDeep(data as Buffer)) {
        this.ctx.log.warn(`streams socket: dropped a message: ${tooDeepMessage('it')}`);
        return;
      }
      const text = data.toString();
      client.queue = client.queue
        .then(() => this.handle(client, text))
        .catch((err) => this.ctx.log.warn(`streams socket: ${(err as Error).message}`));
    });
    ws.on('close', () => {
      this.sockets.delete(client);
      // spec §5.7: leave triggers fire for every subscription still open
      client.queue = client.queue.then(() => {
        for (const sub of [...client.subscriptions.values()]) this.unsubscribe(client, sub);
      });
    });
    ws.on('error', () => ws.terminate());
  }

  /** Optional `auth_function` (spec §6.2); a failure proceeds without context, as in iii. */
  private async authenticate(client: ClientSocket, req: IncomingMessage): Promise<void> {
    const fn = this.ctx.config.auth_function;
    if (!fn) return;
    const url = new URL(req.url ?? '/', 'http://streams');
    const query_params: Record<string, string[]> = {};
    for (const [k, v] of url.searchParams) query_params[k] = [...(query_params[k] ?? []), v];
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const outcome = await this.ctx.invoke(
      fn,
      { headers, path: url.pathname, query_params, addr: `${req.socket.remoteAddress}:${req.socket.remotePort}` },
      { timeoutMs: 10_000 },
    );
    if (!outcome.ok) {
      this.ctx.log.warn(`streams auth_function ${fn} failed: ${outcome.error.code}: ${outcome.error.message}`);
      return;
    }
    const result = outcome.result as { context?: unknown } | null | undefined;
    if (result && typeof result === 'object' && result.context !== undefined) client.context = result.context;
  }

  private async handle(client: ClientSocket, text: string): Promise<void> {
    let parsed: ReturnType<typeof SocketMessage.safeParse>;
    try {
      parsed = SocketMessage.safeParse(JSON.parse(text));
    } catch {
      this.ctx.log.debug('streams socket: dropped a frame that is not JSON');
      return;
    }
    if (!parsed.success) {
      this.ctx.log.warn(`streams socket: dropped a malformed message: ${parsed.error.issues[0]?.message ?? ''}`);
      return;
    }
    const message = parsed.data;
    if (message.type === 'leave') {
      const sub = client.subscriptions.get(message.data.subscriptionId);
      if (sub) this.unsubscribe(client, sub);
      return;
    }
    const { subscriptionId, streamName, groupId } = message.data;
    const id = message.data.id ?? undefined;
    const existing = client.subscriptions.get(subscriptionId);
    if (existing) this.unsubscribe(client, existing);

    const event: JoinLeaveEvent = { subscription_id: subscriptionId, stream_name: streamName, group_id: groupId };
    if (id !== undefined) event.id = id;
    if (client.context !== undefined) event.context = client.context;
    if (!(await this.triggers.authorizeJoin(event))) {
      client.ws.send(JSON.stringify(streamMessage(streamName, groupId, id, { type: 'unauthorized' })));
      return;
    }
    if (client.ws.readyState !== client.ws.OPEN) return;

    // subscribe first and buffer, so a change between reading the sync and sending it is not lost
    const sub: Subscription = { socket: client, subscriptionId, streamName, groupId, id, buffered: [] };
    client.subscriptions.set(subscriptionId, sub);
    const key = groupKey(streamName, groupId);
    let group = this.byGroup.get(key);
    if (!group) {
      group = new Set();
      this.byGroup.set(key, group);
    }
    group.add(sub);
    let data: unknown = id === undefined ? [] : null;
    try {
      data = await this.service.snapshot(streamName, groupId, id);
    } catch (err) {
      this.ctx.log.warn(`streams socket: sync of ${streamName}/${groupId} failed: ${(err as Error).message}`);
    }
    client.ws.send(JSON.stringify(streamMessage(streamName, groupId, id, { type: 'sync', data })));
    const buffered = sub.buffered ?? [];
    sub.buffered = null;
    for (const text of buffered) client.ws.send(text);
  }

  private unsubscribe(client: ClientSocket, sub: Subscription): void {
    client.subscriptions.delete(sub.subscriptionId);
    const key = groupKey(sub.streamName, sub.groupId);
    const group = this.byGroup.get(key);
    group?.delete(sub);
    if (group && group.size === 0) this.byGroup.delete(key);
    const event: JoinLeaveEvent = { subscription_id: sub.subscriptionId, stream_name: sub.streamName, group_id: sub.groupId };
    if (sub.id !== undefined) event.id = sub.id;
    if (client.context !== undefined) event.context = client.context;
    this.triggers.leave(event);
  }
}

function groupKey(streamName: string, groupId: string): string {
  return `${streamName}\u0000${groupId}`;
}
