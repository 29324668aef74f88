import { hostname } from 'node:os';
import { EngError, type ErrorBody, ErrorCode, type FunctionRecord } from '@eng/protocol';
import type { Redis } from 'ioredis';
import type { ChannelManager } from '../../bus/channels.ts';
import type { Core } from '../../core/core.ts';
import { type ClusterDirectory, type FunctionEntry, functionKind, type InvocationInfo } from '../../core/functions.ts';
import { newUuid } from '../../core/ids.ts';
import { type InvokeOutcome, JsonText, type Settle } from '../../core/invoker.ts';
import type { Logger } from '../../log.ts';
import { redisClient } from '../../stores/optional-deps.ts';
import { checkRedis } from '../../stores/redis.ts';
import { bridgeChannels } from './channel-bridge.ts';
import type { ClusterConfig } from './config.ts';

// Several engines on one Redis act as one (issue 27 item 3). Each engine:
// - announces itself and its workers' functions and HTTP routes: `<ns>:cluster:snap:<id>` (JSON)
//   and `<ns>:cluster:alive:<id>` (its snapshot's version), both expiring after `ttl_ms`, refreshed
//   every `heartbeat_ms`; `<ns>:cluster:members` holds the ids; `<ns>:cluster:changes` says when
//   a snapshot changed or an engine left;
// - listens on its own channel `<ns>:cluster:e:<id>` for calls to its functions and for the
//   results of the calls it sent. A member is alive while its alive key exists AND its channel has
//   a subscriber: a killed engine's connection closes, so it is gone at the next check
//   (`check_ms`), and the calls it was running end at once with `invocation_stopped`.
// Wire: a call is `C` + JSON header + "\n" + JSON data; a result is `R <corr> <flag>\n` + JSON
// (flag `ok`, `err`, or `miss` when the function was not there any more); a cancel is
// `X <corr> <calling engine>\n` + the reason (the owner cancels the call as its caller would).

interface AnnouncedFunction {
  id: string;
  description: string | null;
  metadata: Record<string, unknown> | null;
  request_format: unknown;
  response_format: unknown;
  worker_name: string;
  worker_id: string | null;
  kind: FunctionRecord['kind'];
}

interface AnnouncedRoute {
  id: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

interface Snapshot {
  engine_id: string;
  version: string;
  pid: number;
  host: string;
  http_url: string | null;
  bus_url: string | null;
  functions: AnnouncedFunction[];
  http_routes: AnnouncedRoute[];
}

interface Member {
  version: string;
  snapshot: Snapshot;
  functions: Map<string, AnnouncedFunction>;
}

interface CallHeader {
  /** correlation id (unique in the calling engine) */
  c: string;
  /** the calling engine */
  from: string;
  fn: string;
  inv?: string;
  cw?: string;
  tp?: string;
  bg?: string;
  md?: unknown;
  /** ms left of the caller's deadline: the owner's call times out with it */
  to?: number;
}

interface PendingCall {
  functionId: string;
  engineId: string;
  tried: string[];
  header: CallHeader;
  body: string;
  resolve(value: unknown): void;
  reject(error: EngError): void;
}

const MIRROR_PREFIX = 'cluster:';

/** This engine's membership of a cluster: announcements, the other members' functions, routed calls. */
export class Cluster implements ClusterDirectory {
  readonly engineId: string;
  private readonly prefix: string;
  private readonly channel: string;
  private cmd!: Redis;
  private sub!: Redis;
  private readonly members = new Map<string, Member>();
  /** The directory: one entry per function id some other member serves. */
  private readonly entries = new Map<string, FunctionEntry>();
  private readonly pending = new Map<string, PendingCall>();
  /** Calls this engine runs for other members, by `<engine> <corr>`: what a cancel from there stops. */
  private readonly serving = new Map<string, { inv: string; cw: string | undefined }>();
  /** Mirrored HTTP routes: binding id → the member whose route it is and what was bound. */
  private readonly mirrors = new Map<string, { engineId: string; key: string }>();
  private corr = 0;
  private roundRobin = 0;
  private readonly startedAtMs = Date.now();
  private versionCounter = 0;
  private lastAnnounced = '';
  private beatTimer?: NodeJS.Timeout;
  private checkTimer?: NodeJS.Timeout;
  private soonTimer?: NodeJS.Timeout;
  private refreshing = false;
  private refreshAgain = false;
  private stopped = false;
  private redisDown = false;
  private offChange?: () => void;
  /** Set while this class emits its own directory changes (they do not call for a heartbeat). */
  private emitting = false;

  constructor(
    private readonly core: Core,
    private readonly config: ClusterConfig,
    private readonly log: Logger,
    private readonly addresses: () => { http: string | null; bus: string | null },
    private readonly channels: () => ChannelManager | undefined,
  ) {
    this.engineId = config.engine_id ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.prefix = `${config.namespace}:cluster`;
    this.channel = this.engineChannel(this.engineId);
  }

  private engineChannel(id: string): string {
    return `${this.prefix}:e:${id}`;
  }

  async start(): Promise<void> {
    const url = this.config.redis_url;
    // commands fail at once while Redis is away (a call is refused, not queued for later)
    const Redis = redisClient();
    this.cmd = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.sub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null });
    for (const redis of [this.cmd, this.sub]) redis.on('error', () => {});
    try {
      await Promise.all([this.cmd.connect(), this.sub.connect()]);
      await checkRedis(this.cmd, url);
    } catch (err) {
      this.cmd.disconnect();
      this.sub.disconnect();
      throw new Error(`eng-cluster could not reach redis at ${url}: ${(err as Error).message}`);
    }
    // an id is taken while some engine listens on its channel (a killed engine's id is free at once)
    const [, listeners] = (await this.cmd.call('PUBSUB', 'NUMSUB', this.channel)) as [string, number];
    if (Number(listeners) > 0) {
      this.cmd.disconnect();
      this.sub.disconnect();
      throw new Error(`eng-cluster: engine_id ${this.engineId} is already used by a live engine of this cluster (choose another)`);
    }
    this.sub.on('messageBuffer', (channel: Buffer, message: Buffer) => this.onMessage(channel.toString(), message));
    this.sub.on('close', () => this.connectionLost());
    this.sub.on('ready', () => {
      if (!this.redisDown) return;
      this.redisDown = false;
      this.log.info('cluster: connection to redis back; rejoining');
      this.soon();
      void this.refresh();
    });
    await this.sub.subscribe(this.channel, `${this.prefix}:changes`);
    this.core.functions.cluster = this;
    // a worker's function coming or going is announced at once, not at the next heartbeat
    this.offChange = this.core.functions.onChange(() => {
      if (!this.emitting) this.soon();
    });
    await this.beat();
    await this.refresh();
    this.beatTimer = setInterval(() => void this.beat(), this.config.heartbeat_ms);
    this.checkTimer = setInterval(() => void this.refresh(), this.config.check_ms);
    this.beatTimer.unref();
    this.checkTimer.unref();
    this.log.info(`cluster: engine ${this.engineId} joined ${this.prefix} on ${url}`);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.beatTimer);
    clearInterval(this.checkTimer);
    clearTimeout(this.soonTimer);
    this.offChange?.();
    this.failAll(`engine ${this.engineId} is stopping`);
    for (const id of [...this.members.keys()]) this.memberGone(id, null);
    if (this.core.functions.cluster === this) this.core.functions.cluster = undefined;
    // leave at once rather than when the keys expire
    try {
      await this.cmd
        .multi()
        .del(`${this.prefix}:alive:${this.engineId}`, `${this.prefix}:snap:${this.engineId}`)
        .srem(`${this.prefix}:members`, this.engineId)
        .publish(`${this.prefix}:changes`, this.engineId)
        .exec();
    } catch {
      // Redis gone: the keys expire by themselves
    }
    await Promise.allSettled([this.cmd.quit(), this.sub.quit()]);
    this.cmd.disconnect();
    this.sub.disconnect();
  }

  // ── the directory (ClusterDirectory) ────────────────────────────────────

  get(id: string): FunctionEntry | undefined {
    return this.entries.get(id);
  }
  all(): Iterable<FunctionEntry> {
    return this.entries.values();
  }

  /** Members and what they announce, for `eng::cluster::members`. */
  describe(): unknown {
    return {
      engine_id: this.engineId,
      namespace: this.config.namespace,
      members: [
        { engine_id: this.engineId, self: true, ...this.localAddresses() },
        ...[...this.members.values()].map((m) => ({
          engine_id: m.snapshot.engine_id,
          self: false,
          host: m.snapshot.host,
          pid: m.snapshot.pid,
          http_url: m.snapshot.http_url,
          bus_url: m.snapshot.bus_url,
          functions: m.snapshot.functions.length,
          http_routes: m.snapshot.http_routes.length,
        })),
      ].sort((a, b) => (a.engine_id < b.engine_id ? -1 : 1)),
    };
  }

  private localAddresses() {
    const a = this.addresses();
    return { host: hostname(), pid: process.pid, http_url: a.http, bus_url: a.bus };
  }

  // ── announcing this engine ──────────────────────────────────────────────

  private soon(): void {
    if (this.soonTimer || this.stopped) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      void this.beat();
    }, 20);
    this.soonTimer.unref();
  }

  /** What this engine serves: its workers' functions and the HTTP routes bound to them. */
  private announcement(): { functions: AnnouncedFunction[]; http_routes: AnnouncedRoute[] } {
    const functions: AnnouncedFunction[] = [];
    for (const entry of this.core.functions.all()) {
      // engine modules' functions are every engine's own; only workers' functions are routed
      if (entry.ownerWorkerId === null) continue;
      functions.push({
        id: entry.id,
        description: entry.description,
        metadata: entry.metadata,
        request_format: entry.requestFormat ?? null,
        response_format: entry.responseFormat ?? null,
        worker_name: this.core.workers.nameOf(entry.ownerWorkerId) ?? entry.id.split('::')[0] ?? entry.id,
        worker_id: entry.ownerWorkerId,
        kind: functionKind(entry),
      });
    }
    const http_routes: AnnouncedRoute[] = [];
    for (const binding of this.core.bindings.ofType('http')) {
      if (this.mirrors.has(binding.id) || binding.status === 'error') continue;
      const fn = this.core.functions.get(binding.functionId);
      if (!fn || fn.ownerWorkerId === null) continue;
      const route: AnnouncedRoute = { id: binding.id, function_id: binding.functionId, config: binding.config ?? {} };
      if (binding.metadata) route.metadata = binding.metadata;
      http_routes.push(route);
    }
    functions.sort((a, b) => (a.id < b.id ? -1 : 1));
    http_routes.sort((a, b) => (a.id < b.id ? -1 : 1));
    return { functions, http_routes };
  }

  private async beat(): Promise<void> {
    if (this.stopped || this.redisDown) return;
    let body: string;
    try {
      body = JSON.stringify(this.announcement());
    } catch (err) {
      this.log.warn(`cluster: this engine's functions could not be written out: ${(err as Error).message}`);
      return;
    }
    // the addresses count too: the bus opens its port after every module started (its first
    // announcement has none), and other engines reach this one's channels through it
    const a = this.addresses();
    const announced = `${a.http} ${a.bus} ${body}`;
    const changed = announced !== this.lastAnnounced;
    if (changed) this.versionCounter++;
    const version = `${this.startedAtMs}.${this.versionCounter}`;
    const head = JSON.stringify({
      engine_id: this.engineId,
      version,
      pid: process.pid,
      host: hostname(),
      http_url: a.http,
      bus_url: a.bus,
    });
    const snapshot = `${head.slice(0, -1)},${body.slice(1)}`;
    const ttl = this.config.ttl_ms;
    try {
      const tx = this.cmd
        .multi()
        .set(`${this.prefix}:snap:${this.engineId}`, snapshot, 'PX', ttl)
        .set(`${this.prefix}:alive:${this.engineId}`, version, 'PX', ttl)
        .sadd(`${this.prefix}:members`, this.engineId);
      if (changed) tx.publish(`${this.prefix}:changes`, this.engineId);
      await tx.exec();
      this.lastAnnounced = announced;
    } catch (err) {
      this.log.debug(`cluster: heartbeat failed: ${(err as Error).message}`);
    }
  }

  // ── watching the other members ──────────────────────────────────────────

  /** Read who is alive and what changed. One at a time; a request during a run runs once more after it. */
  private async refresh(): Promise<void> {
    if (this.stopped || this.redisDown) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        await this.refreshOnce();
      } while (this.refreshAgain && !this.stopped);
    } catch (err) {
      this.log.debug(`cluster: membership check failed: ${(err as Error).message}`);
    } finally {
      this.refreshing = false;
    }
  }

  private async refreshOnce(): Promise<void> {
    const ids = (await this.cmd.smembers(`${this.prefix}:members`)).filter((id) => id !== this.engineId);
    const seen = new Set(ids);
    for (const id of this.members.keys()) if (!seen.has(id)) this.memberGone(id, 'it left the cluster');
    if (ids.length === 0) return;
    const probe = this.cmd.pipeline();
    for (const id of ids) {
      probe.get(`${this.prefix}:alive:${id}`);
      probe.call('PUBSUB', 'NUMSUB', this.engineChannel(id));
    }
    const replies = (await probe.exec()) ?? [];
    const stale: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      const version = replies[2 * i]?.[1] as string | null | undefined;
      const numsub = replies[2 * i + 1]?.[1] as [string, number] | undefined;
      const listening = Number(numsub?.[1] ?? 0) > 0;
      if (!version) {
        this.memberGone(id, 'its heartbeat lapsed');
        stale.push(id);
        continue;
      }
      if (!listening) {
        this.memberGone(id, 'its connection to redis closed');
        continue;
      }
      if (this.members.get(id)?.version !== version) await this.fetch(id);
    }
    if (stale.length) await this.cmd.srem(`${this.prefix}:members`, ...stale);
  }

  private async fetch(id: string): Promise<void> {
    const text = await this.cmd.get(`${this.prefix}:snap:${id}`);
    if (!text) return;
    let snapshot: Snapshot;
    try {
      snapshot = JSON.parse(text) as Snapshot;
    } catch {
      this.log.warn(`cluster: engine ${id} announced something unreadable; ignored`);
      return;
    }
    if (snapshot.engine_id !== id || !Array.isArray(snapshot.functions) || !Array.isArray(snapshot.http_routes)) return;
    const before = this.members.get(id);
    if (!before) this.log.info(`cluster: engine ${id} joined (${snapshot.functions.length} functions)`);
    const functions = new Map(snapshot.functions.map((f) => [f.id, f]));
    this.members.set(id, { version: snapshot.version, snapshot, functions });
    const touched = new Set([...functions.keys(), ...(before ? before.functions.keys() : [])]);
    for (const fnId of touched) this.rebuild(fnId);
    await this.syncRoutes(id, snapshot.http_routes);
  }

  /** A member is gone: its calls in flight end now, its functions and routes leave the directory. */
  private memberGone(id: string, reason: string | null): void {
    const member = this.members.get(id);
    if (member) {
      this.members.delete(id);
      if (reason) this.log.warn(`cluster: engine ${id} is gone (${reason})`);
      for (const fnId of member.functions.keys()) this.rebuild(fnId);
    }
    for (const [corr, call] of this.pending) {
      if (call.engineId !== id) continue;
      this.pending.delete(corr);
      call.reject(
        new EngError(
          ErrorCode.InvocationStopped,
          `Invocation stopped: engine ${id}, which was running ${call.functionId}, ${reason ?? 'left the cluster'}`,
        ),
      );
    }
    void this.syncRoutes(id, []);
  }

  /** The directory entry of `fnId` from the members serving it now (added, changed or removed). */
  private rebuild(fnId: string): void {
    const owners: string[] = [];
    let first: AnnouncedFunction | undefined;
    for (const [engineId, member] of [...this.members].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const fn = member.functions.get(fnId);
      if (!fn) continue;
      owners.push(engineId);
      first ??= fn;
    }
    const had = this.entries.has(fnId);
    if (!first) {
      if (!had) return;
      this.entries.delete(fnId);
      this.emit(fnId, 'removed');
      return;
    }
    this.entries.set(fnId, {
      id: fnId,
      description: first.description ?? null,
      requestFormat: first.request_format ?? null,
      responseFormat: first.response_format ?? null,
      metadata: first.metadata ?? null,
      ownerWorkerId: null,
      moduleName: 'eng-cluster',
      handler: (input, info) => this.call(fnId, input, info),
      registeredAtMs: Date.now(),
      remote: {
        engineId: owners[0] as string,
        engineIds: owners,
        workerName: first.worker_name,
        workerId: first.worker_id,
        kind: first.kind === 'internal' ? 'user' : first.kind,
      },
    });
    this.emit(fnId, 'added');
  }

  private emit(id: string, kind: 'added' | 'removed'): void {
    this.emitting = true;
    try {
      this.core.functions.clusterChanged(id, kind);
    } finally {
      this.emitting = false;
    }
  }

  /** Mount a member's HTTP routes here (their calls are routed to it), or take them down. */
  private async syncRoutes(engineId: string, routes: AnnouncedRoute[]): Promise<void> {
    const wanted = new Map<string, AnnouncedRoute>();
    if (this.config.http_routes && !this.stopped) for (const r of routes) wanted.set(`${MIRROR_PREFIX}${engineId}:${r.id}`, r);
    for (const [bindingId, mirror] of [...this.mirrors]) {
      if (mirror.engineId !== engineId || wanted.has(bindingId)) continue;
      this.mirrors.delete(bindingId);
      await this.core.unbindTrigger(bindingId);
    }
    for (const [bindingId, route] of wanted) {
      const key = JSON.stringify([route.function_id, route.config, route.metadata ?? null]);
      if (this.mirrors.get(bindingId)?.key === key) continue;
      this.mirrors.set(bindingId, { engineId, key });
      const bound = await this.core.bindTrigger({
        id: bindingId,
        triggerType: 'http',
        functionId: route.function_id,
        config: route.config,
        ...(route.metadata ? { metadata: route.metadata } : {}),
        ownerWorkerId: null,
      });
      if (!bound.ok) this.log.warn(`cluster: route ${bindingId} of engine ${engineId} not mounted here: ${bound.error.message}`);
    }
  }

  // ── calls ───────────────────────────────────────────────────────────────

  /** A call to a function another member serves: sent to it, its outcome comes back as this call's. */
  private call(functionId: string, input: unknown, info: InvocationInfo): Promise<unknown> {
    const header: CallHeader = { c: '', from: this.engineId, fn: functionId, inv: info.invocationId };
    if (info.callerWorkerId) header.cw = info.callerWorkerId;
    if (info.traceparent) header.tp = info.traceparent;
    if (info.baggage) header.bg = info.baggage;
    if (info.metadata !== undefined && info.metadata !== null) header.md = info.metadata;
    // the deadline crosses the hop: the owner's call to its worker ends when this one does
    if (info.timeoutMs) header.to = info.timeoutMs;
    const body = input === undefined ? 'null' : JSON.stringify(input);
    return new Promise((resolve, reject) => {
      const call: PendingCall = { functionId, engineId: '', tried: [], header, body, resolve, reject };
      // a cancel from this call's caller reaches the engine running it (and its worker)
      const forget = this.core.invoker.onCancelled(info, (reason) => this.cancelCall(call, reason));
      call.resolve = (value) => {
        forget();
        resolve(value);
      };
      call.reject = (error) => {
        forget();
        reject(error);
      };
      void this.send(call);
    });
  }

  /** The caller gave the call up: it ends here now, and its owner is told to stop it. */
  private cancelCall(call: PendingCall, reason: string | undefined): void {
    const corr = call.header.c;
    if (corr && this.pending.get(corr) === call) {
      this.pending.delete(corr);
      // one line: a reason's newlines would not change the frame, but keep it readable
      const text = (reason ?? '').slice(0, 1000);
      this.cmd.publish(this.engineChannel(call.engineId), `X ${corr} ${this.engineId}\n${text}`).catch((err: Error) => {
        this.log.warn(`cluster: the cancel of ${call.functionId} could not reach engine ${call.engineId}: ${err.message}`);
      });
    }
    const message = reason ? `Invocation cancelled by its caller: ${reason}` : 'Invocation cancelled by its caller';
    call.reject(new EngError(ErrorCode.InvocationCancelled, message));
  }

  private pickOwner(call: PendingCall): string | undefined {
    const owners = this.entries.get(call.functionId)?.remote?.engineIds.filter((id) => !call.tried.includes(id)) ?? [];
    if (owners.length === 0) return undefined;
    return owners[this.roundRobin++ % owners.length];
  }

  private async send(call: PendingCall): Promise<void> {
    const owner = this.pickOwner(call);
    if (!owner) {
      const left = call.tried.length ? ` (engine ${call.tried.join(', ')} served it and no longer does)` : '';
      call.reject(new EngError(ErrorCode.FunctionNotFound, `Function ${call.functionId} not found${left}`));
      return;
    }
    if (this.redisDown) {
      call.reject(
        new EngError(
          ErrorCode.InvocationError,
          `Function ${call.functionId} runs on engine ${owner}, which this engine cannot reach: its connection to redis is down`,
        ),
      );
      return;
    }
    const corr = `${++this.corr}`;
    call.engineId = owner;
    call.tried.push(owner);
    call.header.c = corr;
    this.pending.set(corr, call);
    let receivers: number;
    try {
      receivers = await this.cmd.publish(this.engineChannel(owner), `C${JSON.stringify(call.header)}\n${call.body}`);
    } catch (err) {
      this.pending.delete(corr);
      call.reject(
        new EngError(
          ErrorCode.InvocationError,
          `Function ${call.functionId} runs on engine ${owner}, which this engine cannot reach: ${(err as Error).message}`,
        ),
      );
      return;
    }
    if (receivers > 0 || !this.pending.has(corr)) return;
    // nobody listens on its channel: it died since the last check; another owner may serve it
    this.pending.delete(corr);
    this.memberGone(owner, 'its connection to redis closed');
    await this.send(call);
  }

  private onMessage(channel: string, message: Buffer): void {
    if (channel !== this.channel) {
      // `changes`: some member's snapshot changed, or it left
      if (message.toString() !== this.engineId) void this.refresh();
      return;
    }
    const kind = message[0];
    if (kind === 0x52 /* R */) this.onResult(message);
    else if (kind === 0x43 /* C */) this.onCall(message);
    else if (kind === 0x58 /* X */) this.onCancel(message);
  }

  /** The calling engine gave up a call it sent here: cancel it as its caller would have. */
  private onCancel(message: Buffer): void {
    const newline = message.indexOf(0x0a);
    if (newline < 0) return;
    const [, corr, from] = message.subarray(0, newline).toString().split(' ');
    const key = `${from} ${corr}`;
    const running = this.serving.get(key);
    if (!running) return;
    this.serving.delete(key);
    const reason = message.subarray(newline + 1, newline + 1 + 1000).toString() || undefined;
    this.core.invoker.cancel(running.inv, running.cw, reason);
  }

  private onResult(message: Buffer): void {
    const newline = message.indexOf(0x0a);
    if (newline < 0) return;
    const [, corr, flag] = message.subarray(0, newline).toString().split(' ');
    const call = this.pending.get(corr as string);
    if (!call) return;
    this.pending.delete(corr as string);
    const json = message.subarray(newline + 1).toString();
    if (flag === 'ok') {
      // JSON text: a bus caller gets it written out as it came, another parses it
      call.resolve(json.length === 0 ? undefined : new JsonText(json));
      return;
    }
    if (flag === 'miss') {
      // the function left that engine since its last announcement: try another one
      void this.send(call);
      return;
    }
    let error: ErrorBody;
    try {
      error = JSON.parse(json) as ErrorBody;
    } catch {
      error = { code: ErrorCode.InvocationError, message: `engine ${call.engineId} answered ${call.functionId} unreadably` };
    }
    call.reject(new EngError(error.code, error.message, error.stacktrace ? { stacktrace: error.stacktrace } : undefined));
  }

  /** Another member's call to a function of one of this engine's workers. */
  private onCall(message: Buffer): void {
    const newline = message.indexOf(0x0a);
    if (newline < 0) return;
    let header: CallHeader;
    let data: unknown;
    try {
      header = JSON.parse(message.subarray(1, newline).toString()) as CallHeader;
      data = JSON.parse(message.subarray(newline + 1).toString());
    } catch {
      this.log.warn('cluster: unreadable call dropped');
      return;
    }
    const reply = this.engineChannel(header.from);
    const entry = this.core.functions.get(header.fn);
    const callerBus = this.members.get(header.from)?.snapshot.bus_url;
    // only this engine's workers' functions are served to other engines: its modules' functions
    // (engine::*, state::*, …) are every engine's own, never reached through another
    if (!entry || entry.ownerWorkerId === null) {
      void this.publishResult(reply, header.c, 'miss', '');
      return;
    }
    // the caller engine's channel refs become channels here, relayed there (an HTTP request's body and response)
    const channels = this.channels();
    const bridged = callerBus && channels ? bridgeChannels(channels, data, callerBus) : undefined;
    const servingKey = `${header.from} ${header.c}`;
    const invocationId = header.inv ?? newUuid();
    this.serving.set(servingKey, { inv: invocationId, cw: header.cw });
    const settle: Settle = {
      takesJson: true,
      settle: (outcome: InvokeOutcome) => {
        this.serving.delete(servingKey);
        bridged?.(outcome);
        if (outcome.ok) {
          let json: string;
          try {
            json = outcome.resultJson ?? (outcome.result === undefined ? '' : JSON.stringify(outcome.result));
          } catch (err) {
            const error = {
              code: ErrorCode.SerializationError,
              message: `the result of ${header.fn} could not be written out: ${(err as Error).message}`,
            };
            void this.publishResult(reply, header.c, 'err', JSON.stringify(error));
            return;
          }
          void this.publishResult(reply, header.c, 'ok', json);
        } else {
          void this.publishResult(reply, header.c, 'err', JSON.stringify(outcome.error));
        }
      },
    };
    // run as the caller's engine asked: its caller named, its trace context and metadata kept
    this.core.invoker.dispatch(
      header.fn,
      data,
      {
        invocationId,
        callerWorkerId: header.cw,
        traceparent: header.tp,
        baggage: header.bg,
        metadata: header.md,
        // a timer takes at most 2^31-1 ms (a larger one would fire at once)
        ...(typeof header.to === 'number' && header.to > 0 ? { timeoutMs: Math.min(Math.ceil(header.to), 2 ** 31 - 1) } : {}),
        payloadOwned: true,
      },
      settle,
    );
  }

  private async publishResult(channel: string, corr: string, flag: 'ok' | 'err' | 'miss', json: string): Promise<void> {
    try {
      await this.cmd.publish(channel, `R ${corr} ${flag}\n${json}`);
    } catch (err) {
      this.log.warn(`cluster: a result could not be sent back: ${(err as Error).message}`);
    }
  }

  // ── losing Redis ────────────────────────────────────────────────────────

  private connectionLost(): void {
    if (this.stopped || this.redisDown) return;
    this.redisDown = true;
    this.log.warn('cluster: connection to redis lost; calls to other engines fail until it is back');
    this.failAll('this engine lost its connection to redis');
    for (const id of [...this.members.keys()]) this.memberGone(id, null);
  }

  private failAll(reason: string): void {
    for (const [corr, call] of this.pending) {
      this.pending.delete(corr);
      call.reject(
        new EngError(ErrorCode.InvocationStopped, `Invocation stopped: ${call.functionId} on engine ${call.engineId}: ${reason}`),
      );
    }
  }
}
