import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ChannelsCreateInput, describeZodError, EngError, EngineFunction, ErrorCode } from '@eng/protocol';
import { type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { MAX_FRAME_DEPTH } from '../core/json-limits.ts';
import type { EngineModule, ModuleContext } from '../core/module.ts';
import type { Logger } from '../log.ts';
import { ChannelManager } from './channels.ts';
import { type TelemetrySink, telemetryPrefix, WorkerConnection } from './connection.ts';
import { AllowedOriginsSchema, OriginGate } from './origins.ts';
import { AuthErrorCode, BusPolicy, BusSession, type Grants, RbacConfigSchema } from './rbac.ts';
import {
  capConnections,
  defaultMaxConnections,
  FrameBudget,
  Heartbeat,
  HeartbeatIntervalSchema,
  HeartbeatTimeoutSchema,
  headerDeadline,
  heartbeatRefinement,
  MaxConnectionsSchema,
} from './socket-limits.ts';

export const WorkerManagerConfig = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(49134),
    /** A frame larger than this closes the sending connection (code 1009). */
    max_frame_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    /** A text frame nesting arrays/objects deeper than this (the frame itself is level 1) is refused unread (json-limits.ts). */
    max_frame_depth: z.number().int().min(8).max(1000).default(MAX_FRAME_DEPTH),
    /**
     * Bytes of frames being received at once, across every connection: past it, a connection
     * receiving a large frame (over 64 KiB so far) is closed with 1009 (socket-limits.ts FrameBudget).
     */
    max_inflight_frame_bytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 * 1024),
    /** A connection that has not sent its whole upgrade request by then is closed. */
    handshake_timeout_ms: z.number().int().positive().default(10_000),
    /** Open sockets at most (default 4096, at most 1/4 of the open-file limit); more are closed at once (socket-limits.ts). */
    max_connections: MaxConnectionsSchema,
    /** Every connection is pinged this often; one that sent nothing (not even a pong) for heartbeat_timeout_ms is closed. */
    heartbeat_interval_ms: HeartbeatIntervalSchema,
    heartbeat_timeout_ms: HeartbeatTimeoutSchema,
    /** Browser origins (`http://localhost:5173`) whose pages may open the bus; others get 403 (origins.ts). */
    allowed_origins: AllowedOriginsSchema,
    /** Calls from this bus's workers (except engine built-ins) go to this function instead (spec §2.5 step 3). */
    middleware_function_id: z.string().min(1).optional(),
    /** Who may connect to this bus and what they may do (bus/rbac.ts, spec §2.13). */
    rbac: RbacConfigSchema.optional(),
  })
  .strict()
  .refine(...heartbeatRefinement)
  .refine((c) => c.max_inflight_frame_bytes >= c.max_frame_bytes, {
    message: 'must be at least max_frame_bytes: one frame of the largest size must fit',
    path: ['max_inflight_frame_bytes'],
  });
export type WorkerManagerConfig = z.infer<typeof WorkerManagerConfig>;

/** Names under which other modules find the bus's shared parts. */
export const BusService = {
  Channels: 'bus.channels',
  Telemetry: 'bus.telemetry',
  Address: 'bus.address',
  /** `(request, socket, head) => void`: take over a WebSocket upgrade accepted by another process (see `adopt`). */
  Adopt: 'bus.adopt',
  /** Every bus of the engine (several eng-worker-manager entries), in config order. */
  Instances: 'bus.instances',
  /** `BusListing[]`: where each bus listens and whether it is guarded; announced as `buses`. */
  Listing: 'address.buses',
} as const;

/** One bus as the engine announces it (several eng-worker-manager entries, spec §2.13). */
export interface BusListing extends BusAddress {
  rbac: boolean;
  middleware_function_id: string | null;
}

/**
 * An upgrade request another process read off a TCP socket it then handed to the engine (the
 * console worker launched by the supervisor does this for its `/ws`): the request line's path and
 * the headers as Node parsed them, and any bytes read past the headers.
 */
export interface AdoptedUpgrade {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  head: Buffer;
}
export type BusAdopt = (request: AdoptedUpgrade, socket: Socket) => void;

export interface BusAddress {
  host: string;
  port: number;
  url: string;
}

/**
 * The worker bus (`eng-worker-manager`): WebSocket server for workers (`/`), telemetry (`/otel`)
 * and channels (`/ws/channels/{id}`). spec: engine-protocol §2.
 */
export class WorkerBus {
  private server?: Server;
  private wss?: WebSocketServer;
  readonly channels: ChannelManager;
  private readonly sockets = new Set<WebSocket>();
  private closing = false;
  private heartbeat?: Heartbeat;
  private budget?: FrameBudget;

  private readonly ownsChannels: boolean;
  /** Set when the bus has `rbac` or `middleware_function_id`. */
  readonly policy?: BusPolicy;

  constructor(
    private readonly ctx: ModuleContext<WorkerManagerConfig>,
    private readonly log: Logger,
    /** Another bus's channels: every bus serves the same ones (a channel ref names no host). */
    shared?: ChannelManager,
  ) {
    this.channels = shared ?? new ChannelManager(log.child('channels'));
    this.ownsChannels = !shared;
    const { middleware_function_id, rbac } = ctx.config;
    if (middleware_function_id || rbac) this.policy = new BusPolicy(ctx.core, middleware_function_id, rbac, log);
  }

  async listen(): Promise<BusAddress> {
    const { host, port, max_frame_bytes } = this.ctx.config;
    const wss = new WebSocketServer({ noServer: true, maxPayload: max_frame_bytes, perMessageDeflate: false });
    this.wss = wss;
    const server = createServer(headerDeadline(this.ctx.config.handshake_timeout_ms), (_req, res) => {
      // plain HTTP on the bus port: tell the caller what this port is for
      res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
      res.end(JSON.stringify({ error: { code: 'UPGRADE_REQUIRED', message: 'this is the eng worker bus: connect with a WebSocket' } }));
    });
    const { max_connections, heartbeat_interval_ms, heartbeat_timeout_ms } = this.ctx.config;
    capConnections(server, max_connections ?? defaultMaxConnections(), 'worker bus', 'max_connections of eng-worker-manager', (m) =>
      this.log.warn(m),
    );
    this.heartbeat = new Heartbeat(heartbeat_interval_ms, heartbeat_timeout_ms);
    this.budget = new FrameBudget(
      this.ctx.config.max_inflight_frame_bytes,
      'worker bus',
      'max_inflight_frame_bytes of eng-worker-manager',
      (m) => this.log.warn(m),
    );
    // browser pages from unlisted origins are refused here; adopted sockets were vouched for by their worker
    const gate = new OriginGate(this.ctx.config.allowed_origins, 'eng worker bus', 'eng-worker-manager', (m) => this.log.warn(m));
    server.on('upgrade', (req, socket, head) => {
      if (gate.admit(req, socket)) this.onUpgrade(req, socket, head);
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

  async close(): Promise<void> {
    this.closing = true;
    this.heartbeat?.stop();
    if (this.ownsChannels) this.channels.close();
    for (const socket of this.sockets) socket.close(1001, 'engine shutting down');
    await new Promise((r) => setTimeout(r, 50));
    for (const socket of this.sockets) socket.terminate();
    this.wss?.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * Serve an upgrade whose socket another process accepted and handed over: the connection becomes
   * an ordinary bus connection, exactly as if the client had dialled the bus (no relay in between).
   * Only the worker path `/` is taken; anything else, or a bus that is not serving, is refused.
   * `allowed_origins` does not apply: the worker that accepted the socket checked the page's origin
   * against the address it served the page from (the console worker's same-origin and Host rules).
   */
  adopt(request: AdoptedUpgrade, socket: Socket): void {
    socket.on('error', (err) => this.log.debug(`adopted socket error: ${err.message}`));
    if (!this.wss || this.closing) {
      rejectUpgrade(socket, 503, 'Service Unavailable');
      return;
    }
    const path = request.path.split('?')[0];
    if (path !== '/' && path !== '') {
      rejectUpgrade(socket, 404, 'Not Found');
      return;
    }
    // the request as `ws` reads it: method, url, headers and the socket it came on
    const req = { method: 'GET', url: request.path, headers: request.headers, socket } as unknown as IncomingMessage;
    this.onUpgrade(req, socket, request.head);
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://bus');
    const path = url.pathname;
    const wss = this.wss as WebSocketServer;
    if (path === '/' || path === '') {
      wss.handleUpgrade(req, socket, head, (ws) => {
        this.heartbeat?.watch(ws, socket);
        this.budget?.watch(ws, socket);
        this.acceptWorker(ws, req);
      });
      return;
    }
    if (path === '/otel') {
      wss.handleUpgrade(req, socket, head, (ws) => {
        this.heartbeat?.watch(ws, socket);
        this.budget?.watch(ws, socket);
        this.admit(ws, req, () => this.acceptTelemetry(ws));
      });
      return;
    }
    const channelMatch = /^\/ws\/channels\/([^/]+)$/.exec(path);
    if (channelMatch) {
      const id = decodeURIComponent(channelMatch[1] as string);
      const key = url.searchParams.get('key');
      const dir = url.searchParams.get('dir');
      if (!this.channels.check(id, key) || (dir !== 'read' && dir !== 'write')) {
        rejectUpgrade(socket, 404, 'Channel not found');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        this.heartbeat?.watch(ws, socket);
        this.budget?.watch(ws, socket);
        this.acceptChannel(ws, id, key as string, dir);
      });
      return;
    }
    rejectUpgrade(socket, 404, 'Not Found');
  }

  private track(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
  }

  /** ws closes an oversized frame's connection with 1009 and no reason; give the peer one. */
  private explainOversize(ws: WebSocket): void {
    const limit = this.ctx.config.max_frame_bytes;
    const close = ws.close.bind(ws);
    ws.close = (code?: number, reason?: string | Buffer) =>
      close(code, code === 1009 && !reason ? `Max payload size exceeded: frames are limited to ${limit} bytes (max_frame_bytes)` : reason);
  }

  private acceptWorker(ws: WebSocket, req: IncomingMessage): void {
    this.track(ws);
    this.explainOversize(ws);
    ws.on('error', (err) => {
      // ws reports oversized frames here and closes with 1009 "Max payload size exceeded"
      this.log.warn(`worker connection error: ${err.message}`);
    });
    const connection = new WorkerConnection(
      ws,
      req.socket.remoteAddress ?? null,
      this.ctx.core,
      this.log,
      () => this.ctx.services.get<TelemetrySink>(BusService.Telemetry),
      { maxDepth: this.ctx.config.max_frame_depth },
    );
    this.admit(ws, req, (grants) => {
      if (grants && this.policy) connection.session = new BusSession(this.policy, grants, connection);
      connection.start();
    });
  }

  /**
   * spec §2.1 session step: on a bus with `rbac`, the auth function decides before the connection
   * exists. Frames that arrive meanwhile are held and replayed in order; a refusal is one `error`
   * frame, then a close (1008).
   */
  private admit(ws: WebSocket, req: IncomingMessage, open: (grants?: Grants) => void): void {
    const policy = this.policy;
    if (!policy) {
      open();
      return;
    }
    const held: Array<[unknown, boolean]> = [];
    const hold = (data: unknown, isBinary: boolean) => held.push([data, isBinary]);
    ws.on('message', hold);
    ws.pause();
    void policy.authenticate(req).then((result) => {
      ws.off('message', hold);
      if (ws.readyState !== ws.OPEN) return;
      if (!result.ok) {
        this.log.warn(`connection from ${req.socket.remoteAddress ?? '?'} refused: ${result.error.message}`);
        ws.send(JSON.stringify({ type: 'error', error: result.error }));
        ws.resume(); // the close handshake needs the peer's close frame read
        ws.close(1008, AuthErrorCode);
        return;
      }
      open(result.grants);
      for (const [data, isBinary] of held) ws.emit('message', data, isBinary);
      ws.resume();
    });
  }

  private acceptTelemetry(ws: WebSocket): void {
    this.track(ws);
    this.explainOversize(ws);
    ws.on('error', (err) => this.log.warn(`telemetry connection error: ${err.message}`));
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return; // §2.12: text frames are ignored on /otel
      const buffer = data as Buffer;
      const prefix = telemetryPrefix(buffer);
      if (!prefix) {
        this.log.warn('dropped telemetry frame: unknown prefix');
        return;
      }
      this.ctx.services.get<TelemetrySink>(BusService.Telemetry)?.(prefix, buffer.subarray(4), null);
    });
  }

  private acceptChannel(ws: WebSocket, id: string, key: string, dir: 'read' | 'write'): void {
    this.track(ws);
    ws.on('error', (err) => this.log.debug(`channel ${id} socket error: ${err.message}`));
    if (dir === 'read') {
      const ok = this.channels.attachReader(id, key, {
        send: (frame, written) => ws.send(frame.data, { binary: frame.binary }, () => written()),
        close: (code, reason) => ws.close(code, reason),
      });
      if (!ok) {
        ws.close(1008, 'channel end already taken');
        return;
      }
      ws.on('close', () => this.channels.readerGone(id));
      return;
    }
    const writer = this.channels.attachWriter(id, key, {
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      close: (code, reason) => ws.close(code, reason),
    });
    if (!writer) {
      ws.close(1008, 'channel end already taken');
      return;
    }
    ws.on('message', (data, isBinary) => {
      writer.push({ data: isBinary ? (data as Buffer) : (data as Buffer).toString('utf8'), binary: isBinary });
    });
    // 1000 and 1005 (no status) are orderly ends; anything else means the writer died mid-stream
    ws.on('close', (code) => writer.end(code !== 1000 && code !== 1005));
  }
}

function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = message;
  socket.write(
    `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Error'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroy();
}

export function workerManagerModule(): EngineModule<WorkerManagerConfig> {
  let bus: WorkerBus | undefined;
  let context: ModuleContext<WorkerManagerConfig> | undefined;
  return {
    name: 'eng-worker-manager',
    aliases: ['iii-worker-manager'],
    description: 'worker bus: WebSocket connections, telemetry and channels',
    configSchema: WorkerManagerConfig,
    mandatory: true,
    async start(ctx) {
      const shared = ctx.services.get<ChannelManager>(BusService.Channels);
      bus = new WorkerBus(ctx, ctx.log, shared);
      ctx.services.set(BusService.Instances, [...(ctx.services.get<WorkerBus[]>(BusService.Instances) ?? []), bus]);
      context = ctx;
      // another eng-worker-manager entry (spec §2.13): it serves the first bus's channels and functions
      if (shared) return;
      ctx.services.set(BusService.Channels, bus.channels);
      ctx.core.onWorkerDisconnect((workerId) => bus?.channels.removeOwnedBy(workerId));
      ctx.registerFunction(
        {
          id: EngineFunction.ChannelsCreate,
          description: 'Create a byte/text channel; returns a writer and a reader reference',
          request_format: { type: 'object', properties: { buffer_size: { type: 'integer', minimum: 1, maximum: 1024 } } },
        },
        (input) => {
          const parsed = ChannelsCreateInput.safeParse(input ?? {});
          if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, describeZodError(parsed.error));
          return (bus as WorkerBus).channels.create(parsed.data.buffer_size ?? 64, null);
        },
      );
      context = ctx;
    },
    async afterStart() {
      if (!bus || !context) return;
      const address = await bus.listen();
      const buses = context.services.get<WorkerBus[]>(BusService.Instances) ?? [bus];
      const policy = bus.policy;
      context.services.set<BusListing[]>(BusService.Listing, [
        ...(context.services.get<BusListing[]>(BusService.Listing) ?? []),
        { ...address, rbac: !!policy?.rbac, middleware_function_id: policy?.middlewareFunctionId ?? null },
      ]);
      // the engine's address (launched workers, the CLI, the console's hand-over) is the first bus
      // without rbac; RBAC buses are for browsers and third-party workers
      if (bus === (buses.find((b) => !b.policy?.rbac) ?? buses[0])) {
        context.services.set(BusService.Address, address);
        const serving = bus;
        context.services.set<BusAdopt>(BusService.Adopt, (request, socket) => serving.adopt(request, socket));
      }
      const guard = policy?.rbac
        ? ` (RBAC${policy.rbac.auth_function_id ? `: auth ${policy.rbac.auth_function_id}` : ''}${policy.middlewareFunctionId ? `, middleware ${policy.middlewareFunctionId}` : ''})`
        : policy?.middlewareFunctionId
          ? ` (middleware ${policy.middlewareFunctionId})`
          : '';
      context.log.info(`worker bus listening on ${address.url}${guard}`);
    },
    async stop() {
      await bus?.close();
    },
  };
}
