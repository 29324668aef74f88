import { randomUUID } from 'node:crypto';
import { describeZodError } from '@eng/protocol';
import type { Redis } from 'ioredis';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { Logger } from '../../log.ts';
import { redisClient } from '../../stores/optional-deps.ts';
import { checkRedis } from '../../stores/redis.ts';
import type { QueueBroker, TopicStats } from './broker.ts';
import {
  backoffDelay,
  type LaneSettings,
  laneSettingsOfQueue,
  laneSettingsOfSubscriber,
  type QueueModuleConfig,
  type RedisQueueAdapter,
  SubscriberTriggerConfigSchema,
} from './config.ts';
import { type DeliveryDeps, type DeliveryVerdict, deliverOnce } from './dispatcher.ts';
import { BROKER, groupOf, type MessageContext, type TopicRow } from './service.ts';
import { DuplicateMessageError, type MessageKind, type NewMessage, type StoredMessage, topicLaneKey } from './store.ts';

/*
 * The queue on a Redis that several engines share. Layout (P = key_prefix):
 *
 *   P m:<id>                 hash: body (the message's fixed fields as JSON), seq, attempts, part, name,
 *                            group (FIFO), error, failedAt, token (the current claim), wait (FIFO retry time)
 *   P p:<part>:pending       zset id → seq: ready to be claimed, oldest first
 *   P p:<part>:delayed       zset id → due time: retries in their backoff, delayed first deliveries
 *   P p:<part>:inflight      zset id → lease deadline: claimed by an engine that renews the lease
 *   P locks:<part>           hash FIFO group → id of the message that holds the group
 *   P dlq:<name>             zset id → order of failure: the dead-letter queue of a queue or topic
 *   P cnt:<name>             hash delivered, failed
 *   P parts, P parts:<name>  sets of partitions; P names: set of JSON [kind, name]
 *   P subs:<topic>           hash function id → durable:subscriber config; P topics: set of topics
 *   P bound:<part>           hash engine id → last heartbeat: engines where the subscriber is bound
 *   P dormant                hash part → since when no engine has the subscriber bound
 *   P wake                   pub/sub channel: `<origin engine id>\n<part>`, a partition received messages
 *
 * A partition is one function of a named queue (`q:["queue","fn"]`) or one subscribing function of a
 * topic (`t:["topic","fn"]`): an engine claims only partitions whose function its own workers serve.
 * Every state change is one Lua script, so engines never see half a move. See README.md (Redis).
 */

const MESSAGE_FIELDS = `
local P = ARGV[1]
local function mkey(id) return P .. 'm:' .. id end
local function pkey(part, what) return P .. 'p:' .. part .. ':' .. what end
local function unlock(part, id, group)
  if group then
    local locks = P .. 'locks:' .. part
    if redis.call('HGET', locks, group) == id then redis.call('HDEL', locks, group) end
  end
end
local function kill(id, name, part, group, err, now)
  local mk = mkey(id)
  redis.call('HSET', mk, 'failedAt', now, 'token', '')
  if err then redis.call('HSET', mk, 'error', err) end
  redis.call('ZADD', P .. 'dlq:' .. name, redis.call('INCR', P .. 'seq'), id)
  unlock(part, id, group)
end
`;

/**
 * ARGV: P, now, n, origin engine, claim token ('' none), lease deadline, then per message: id, part,
 * name, nameRef, body, group ('-' none, 'g:<value>'), readyAt. With a claim token, one standard
 * message that is ready, in a partition with nothing else pending, is claimed by the inserting engine
 * at once (returns {2}): it runs without a wake-up and a claim round trip.
 */
const INSERT = `${MESSAGE_FIELDS}
local now = tonumber(ARGV[2]); local n = tonumber(ARGV[3]); local origin = ARGV[4]
local token, lease = ARGV[5], ARGV[6]
for i = 0, n - 1 do
  local id = ARGV[7 + i * 7]
  if redis.call('EXISTS', mkey(id)) == 1 then return {0, id} end
end
local woken = {}
for i = 0, n - 1 do
  local b = 7 + i * 7
  local id, part, name, ref, body, grp, ready = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], tonumber(ARGV[b + 6])
  local seq = redis.call('INCR', P .. 'seq')
  local mk = mkey(id)
  redis.call('HSET', mk, 'body', body, 'seq', seq, 'attempts', 0, 'part', part, 'name', name)
  if grp ~= '-' then redis.call('HSET', mk, 'group', string.sub(grp, 3)) end
  redis.call('SADD', P .. 'parts', part)
  redis.call('SADD', P .. 'parts:' .. name, part)
  redis.call('SADD', P .. 'names', ref)
  if n == 1 and token ~= '' and grp == '-' and ready <= now and redis.call('ZCARD', pkey(part, 'pending')) == 0 then
    redis.call('ZADD', pkey(part, 'inflight'), lease, id)
    redis.call('HSET', mk, 'token', token)
    return {2}
  end
  if ready > now then redis.call('ZADD', pkey(part, 'delayed'), ready, id)
  else redis.call('ZADD', pkey(part, 'pending'), seq, id) end
  if not woken[part] then woken[part] = true; redis.call('PUBLISH', P .. 'wake', origin .. '\\n' .. part) end
end
return {1}
`;

/**
 * ARGV: P, part, name, now, limit, leaseDeadline, fifo, maxAttempts, token, scanLimit, expiredError.
 * Takes back expired leases, promotes due delayed messages, then claims up to `limit` messages.
 * Returns {nextDue (-1: none), id, body, attempts, id, body, attempts, …}.
 */
const CLAIM = `${MESSAGE_FIELDS}
local part, name = ARGV[2], ARGV[3]
local now = tonumber(ARGV[4]); local limit = tonumber(ARGV[5]); local lease = tonumber(ARGV[6])
local fifo = ARGV[7] == '1'; local maxA = tonumber(ARGV[8]); local token = ARGV[9]; local scan = tonumber(ARGV[10])
local pending, delayed, inflight = pkey(part, 'pending'), pkey(part, 'delayed'), pkey(part, 'inflight')
local cnt = P .. 'cnt:' .. name
-- 1. leases that ran out: the engine that claimed them died or stalled
local expired = redis.call('ZRANGEBYSCORE', inflight, '-inf', now, 'LIMIT', 0, 200)
for _, id in ipairs(expired) do
  redis.call('ZREM', inflight, id)
  local f = redis.call('HMGET', mkey(id), 'seq', 'group')
  if f[1] then
    local a = redis.call('HINCRBY', mkey(id), 'attempts', 1)
    redis.call('HSET', mkey(id), 'error', ARGV[11], 'token', '')
    redis.call('HINCRBY', cnt, 'failed', 1)
    if a >= maxA then kill(id, name, part, f[2], nil, now)
    else redis.call('ZADD', pending, f[1], id) end
  end
end
-- 2. delayed messages that came due go to the end of the line
local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 500)
for _, id in ipairs(due) do
  redis.call('ZREM', delayed, id)
  if redis.call('EXISTS', mkey(id)) == 1 then
    local seq = redis.call('INCR', P .. 'seq')
    redis.call('HSET', mkey(id), 'seq', seq)
    redis.call('ZADD', pending, seq, id)
  end
end
-- 3. claim
local out = {}
local taken = 0
local nextDue = -1
local function note(t) if nextDue < 0 or t < nextDue then nextDue = t end end
local function take(id)
  local mk = mkey(id)
  redis.call('ZREM', pending, id)
  redis.call('ZADD', inflight, lease, id)
  redis.call('HSET', mk, 'token', token)
  redis.call('HDEL', mk, 'wait')
  local f = redis.call('HMGET', mk, 'body', 'attempts')
  out[#out + 1] = id; out[#out + 1] = f[1]; out[#out + 1] = f[2]
  taken = taken + 1
end
if limit > 0 then
  if not fifo then
    for _, id in ipairs(redis.call('ZRANGE', pending, 0, limit - 1)) do
      if redis.call('EXISTS', mkey(id)) == 1 then take(id) else redis.call('ZREM', pending, id) end
    end
  else
    local seen = {}
    for _, id in ipairs(redis.call('ZRANGE', pending, 0, scan - 1)) do
      if taken >= limit then break end
      local f = redis.call('HMGET', mkey(id), 'group', 'wait', 'seq')
      if not f[3] then
        redis.call('ZREM', pending, id)
      else
        local g = f[1] or ''
        if not seen[g] then
          -- only the oldest message of a group may run, and only while no other message holds it
          seen[g] = true
          local locks = P .. 'locks:' .. part
          local holder = redis.call('HGET', locks, g)
          if holder and holder ~= id and redis.call('EXISTS', mkey(holder)) == 0 then holder = false end
          if (not holder) or holder == id then
            local w = tonumber(f[2] or '0')
            if w <= now then redis.call('HSET', locks, g, id); take(id) else note(w) end
          end
        end
      end
    end
  end
end
local d = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES'); if d[2] then note(tonumber(d[2])) end
local l = redis.call('ZRANGE', inflight, 0, 0, 'WITHSCORES'); if l[2] then note(tonumber(l[2])) end
table.insert(out, 1, tostring(nextDue))
return out
`;

/**
 * ARGV: P, n, then n pairs id, name. Delivered: each is gone from wherever it is (the DLQ included)
 * and counted. The acknowledgements of one turn go in one call.
 */
const ACK = `${MESSAGE_FIELDS}
local n = tonumber(ARGV[2])
local done = 0
for i = 0, n - 1 do
  local id, name = ARGV[3 + i * 2], ARGV[4 + i * 2]
  local f = redis.call('HMGET', mkey(id), 'part', 'group')
  if f[1] then
    redis.call('ZREM', pkey(f[1], 'inflight'), id)
    redis.call('ZREM', pkey(f[1], 'pending'), id)
    redis.call('ZREM', pkey(f[1], 'delayed'), id)
    redis.call('ZREM', P .. 'dlq:' .. name, id)
    unlock(f[1], id, f[2])
    redis.call('DEL', mkey(id))
    redis.call('HINCRBY', P .. 'cnt:' .. name, 'delivered', 1)
    done = done + 1
  end
end
return done
`;

/** ARGV: P, id, name, token, attempts, readyAt, error, fifo. Failed, retried at readyAt (only the claim holder may). */
const RETRY = `${MESSAGE_FIELDS}
local id, name, token = ARGV[2], ARGV[3], ARGV[4]
local f = redis.call('HMGET', mkey(id), 'part', 'token', 'seq')
if not f[1] or f[2] ~= token then return 0 end
if redis.call('ZREM', pkey(f[1], 'inflight'), id) == 0 then return 0 end
redis.call('HSET', mkey(id), 'attempts', ARGV[5], 'error', ARGV[7], 'token', '')
redis.call('HINCRBY', P .. 'cnt:' .. name, 'failed', 1)
if ARGV[8] == '1' then
  -- FIFO: it keeps its place and its group's lock through the backoff
  redis.call('HSET', mkey(id), 'wait', ARGV[6])
  redis.call('ZADD', pkey(f[1], 'pending'), f[3], id)
else
  redis.call('ZADD', pkey(f[1], 'delayed'), ARGV[6], id)
end
return 1
`;

/** ARGV: P, id, name, token, attempts, error, now. Failed for the last time: to the DLQ. */
const DEAD = `${MESSAGE_FIELDS}
local id, name, token = ARGV[2], ARGV[3], ARGV[4]
local f = redis.call('HMGET', mkey(id), 'part', 'token', 'group')
if not f[1] or f[2] ~= token then return 0 end
if redis.call('ZREM', pkey(f[1], 'inflight'), id) == 0 then return 0 end
redis.call('HSET', mkey(id), 'attempts', ARGV[5])
kill(id, name, f[1], f[3], ARGV[6], ARGV[7])
redis.call('HINCRBY', P .. 'cnt:' .. name, 'failed', 1)
return 1
`;

/** ARGV: P, id, token. Not the handler's fault (its function went away, the engine stops): ready again at once. */
const RELEASE = `${MESSAGE_FIELDS}
local id, token = ARGV[2], ARGV[3]
local f = redis.call('HMGET', mkey(id), 'part', 'token', 'seq')
if not f[1] or f[2] ~= token then return 0 end
if redis.call('ZREM', pkey(f[1], 'inflight'), id) == 0 then return 0 end
redis.call('HSET', mkey(id), 'token', '')
redis.call('ZADD', pkey(f[1], 'pending'), f[3], id)
redis.call('PUBLISH', P .. 'wake', '\\n' .. f[1])
return 1
`;

/** ARGV: P, part, name, error, now. Every waiting message of a partition to the DLQ (its subscriber is gone). */
const DEAD_PART = `${MESSAGE_FIELDS}
local part, name = ARGV[2], ARGV[3]
local n = 0
for _, what in ipairs({'pending', 'delayed'}) do
  for _, id in ipairs(redis.call('ZRANGE', pkey(part, what), 0, -1)) do
    if redis.call('EXISTS', mkey(id)) == 1 then
      kill(id, name, part, redis.call('HGET', mkey(id), 'group') or nil, ARGV[4], ARGV[5])
      n = n + 1
    end
  end
  redis.call('DEL', pkey(part, what))
end
return n
`;

/** ARGV: P, name, id ('' = all). Back from the DLQ to the end of its partition with a fresh retry budget. */
const REDRIVE = `${MESSAGE_FIELDS}
local name, one = ARGV[2], ARGV[3]
local dlq = P .. 'dlq:' .. name
local ids
if one == '' then ids = redis.call('ZRANGE', dlq, 0, -1)
elseif redis.call('ZSCORE', dlq, one) then ids = {one}
else ids = {} end
local n = 0
for _, id in ipairs(ids) do
  redis.call('ZREM', dlq, id)
  local part = redis.call('HGET', mkey(id), 'part')
  if part then
    local seq = redis.call('INCR', P .. 'seq')
    redis.call('HSET', mkey(id), 'attempts', 0, 'seq', seq)
    redis.call('HDEL', mkey(id), 'error', 'failedAt', 'wait', 'token')
    redis.call('ZADD', pkey(part, 'pending'), seq, id)
    redis.call('SADD', P .. 'parts', part)
    redis.call('PUBLISH', P .. 'wake', '\\n' .. part)
    n = n + 1
  end
end
return n
`;

/** ARGV: P, name, id. */
const DISCARD = `${MESSAGE_FIELDS}
if redis.call('ZREM', P .. 'dlq:' .. ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('DEL', mkey(ARGV[3]))
return 1
`;

interface QueueRedis extends Redis {
  engqInsert(...args: Array<string | number>): Promise<[number, string?]>;
  engqClaim(...args: Array<string | number>): Promise<string[]>;
  engqAck(...args: Array<string | number>): Promise<number>;
  engqRetry(...args: Array<string | number>): Promise<number>;
  engqDead(...args: Array<string | number>): Promise<number>;
  engqRelease(...args: Array<string | number>): Promise<number>;
  engqDeadPart(...args: Array<string | number>): Promise<number>;
  engqRedrive(...args: Array<string | number>): Promise<number>;
  engqDiscard(...args: Array<string | number>): Promise<number>;
}

/** The fixed fields of a message, stored once as JSON (`body`). */
type Body = Omit<NewMessage, 'lane'>;

/** One function of a queue, or one subscribing function of a topic, as this engine serves it. */
interface Part {
  key: string;
  kind: MessageKind;
  name: string;
  functionId: string;
  /** Deliveries this engine runs now: id → claim token. */
  inflight: Map<string, string>;
  /** Local durable:subscriber bindings (topic partitions) and the settings they gave. */
  bindings: Set<string>;
  subscriberSettings: LaneSettings | null;
  forgetTimer: NodeJS.Timeout | null;
  scheduled: boolean;
  claiming: boolean;
  again: boolean;
  /**
   * The partition may hold messages this engine could claim: set by every wake-up (a message stored
   * that was not claimed on the way, another engine's wake, a timer), cleared when a claim of a
   * standard partition comes back with fewer than it asked for. While set, every finished delivery
   * claims again, and enqueues do not try to claim on the way (they would take slots from the
   * backlog's claim and jump ahead of it).
   */
  wanted: boolean;
  timer: NodeJS.Timeout | null;
  timerAt: number;
}

export function queuePartKey(queue: string, functionId: string): string {
  return `q:${JSON.stringify([queue, functionId])}`;
}

function parsePartKey(key: string): { kind: MessageKind; name: string; functionId: string } | null {
  try {
    const [name, functionId] = JSON.parse(key.slice(2)) as [string, string];
    if (typeof name !== 'string' || typeof functionId !== 'string') return null;
    return { kind: key.startsWith('t:') ? 'topic' : 'queue', name, functionId };
  } catch {
    return null;
  }
}

const UNSUBSCRIBE_GRACE_MS = 1000;
const STORE_ERROR_PAUSE_MS = 1000;
/** How many pending messages a FIFO claim looks through for groups that are free. */
const FIFO_SCAN = 1000;

export interface RedisBrokerDeps extends DeliveryDeps {
  config: QueueModuleConfig;
  adapter: RedisQueueAdapter['config'];
  log: Logger;
}

export class RedisQueueBroker implements QueueBroker {
  readonly adapterName = 'redis' as const;
  private readonly engineId = randomUUID();
  private readonly redis: QueueRedis;
  private readonly sub: Redis;
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly parts = new Map<string, Part>();
  private readonly partOfBinding = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private tokenSeq = 0;
  private stopped = false;
  private pendingAcks: Array<{ id: string; name: string; resolve: () => void; reject: (err: unknown) => void }> = [];
  private acksScheduled = false;

  constructor(private readonly deps: RedisBrokerDeps) {
    const url = deps.adapter.redis_url;
    this.prefix = deps.adapter.key_prefix;
    this.leaseMs = deps.adapter.lease_ms;
    this.heartbeatMs = Math.max(50, Math.min(5000, Math.floor(this.leaseMs / 3)));
    // commands issued in one turn go out in one write (the queue issues many small ones)
    const Redis = redisClient();
    this.redis = new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true }) as QueueRedis;
    this.redis.on('error', () => {
      // ioredis reconnects by itself; failed commands reject with the reason
    });
    const scripts: Record<string, string> = {
      engqInsert: INSERT,
      engqClaim: CLAIM,
      engqAck: ACK,
      engqRetry: RETRY,
      engqDead: DEAD,
      engqRelease: RELEASE,
      engqDeadPart: DEAD_PART,
      engqRedrive: REDRIVE,
      engqDiscard: DISCARD,
    };
    for (const [name, lua] of Object.entries(scripts)) this.redis.defineCommand(name, { numberOfKeys: 0, lua });
    // a connection in subscriber mode can issue nothing else, so it has its own
    this.sub = new Redis(url, { maxRetriesPerRequest: 3 });
    this.sub.on('error', () => {});
  }

  async start(): Promise<void> {
    const url = this.deps.adapter.redis_url;
    await checkRedis(this.redis, url);
    await checkRedis(this.sub, url);
    this.sub.on('message', (_channel: string, text: string) => {
      // `<origin engine>\n<part>`: an engine has already woken its own lanes for what it stored
      const cut = text.indexOf('\n');
      if (text.slice(0, cut) !== this.engineId) this.wake(text.slice(cut + 1));
    });
    await this.sub.subscribe(`${this.prefix}wake`);
    for (const key of await this.redis.smembers(`${this.prefix}parts`)) this.part(key);
    for (const part of this.parts.values()) this.schedule(part);
    // renew the leases of this engine's deliveries and the heartbeat of its subscribers
    this.every(this.heartbeatMs, () => this.heartbeat());
    // take back what dead engines left, and retries that came due, even when nothing is published
    this.every(Math.max(100, Math.floor(this.leaseMs / 2)), () => {
      for (const part of this.parts.values()) this.schedule(part);
    });
    this.every(Math.min(60_000, Math.max(1000, this.deps.config.subscriber_ttl_ms)), () => {
      this.expireSubscribers().catch((err: unknown) =>
        this.deps.log.error('expiring dormant subscribers failed', { error: (err as Error).message }),
      );
    });
  }

  // ── writes ───────────────────────────────────────────────────────────

  async enqueue(message: NewMessage, _settings: LaneSettings): Promise<void> {
    const part = this.part(queuePartKey(message.name, message.functionId));
    const settings = this.settings(part);
    // this engine serves it and has a free slot: take it in the same round trip (see INSERT)
    const fast = !this.stopped && !part.wanted && this.serves(part) && !settings.fifo && part.inflight.size < settings.concurrency;
    const token = fast ? `${this.engineId}/${++this.tokenSeq}` : '';
    if (fast) part.inflight.set(message.id, token);
    let claimed = false;
    try {
      claimed = await this.insert([{ message, part: part.key }], token);
    } finally {
      if (!claimed) part.inflight.delete(message.id);
    }
    if (!claimed) {
      this.schedule(part);
      return;
    }
    const { lane: _lane, ...body } = message;
    this.deliver(part, settings, { ...body, lane: part.key, seq: 0, attempts: 0, lastError: null, failedAt: null }, token);
  }

  async publish(topic: string, data: unknown, trace: MessageContext): Promise<number> {
    const subscribers = await this.redis.hgetall(`${this.prefix}subs:${topic}`);
    const entries = Object.entries(subscribers);
    if (entries.length === 0) return 0;
    const now = Date.now();
    const dataJson = JSON.stringify(data ?? null);
    const batch = entries.map(([functionId, configText]) => {
      const settings = this.subscriberSettings(configText);
      const message: NewMessage = {
        id: randomUUID(),
        lane: topic,
        name: topic,
        kind: 'topic',
        functionId,
        group: settings.fifo ? groupOf(settings.groupField, data) : null,
        dataJson,
        sender: trace.sender ?? null,
        traceparent: trace.traceparent ?? null,
        baggage: trace.baggage ?? null,
        enqueuedAt: now,
        readyAt: now + settings.delayMs,
      };
      return { message, part: topicLaneKey(topic, functionId) };
    });
    await this.insert(batch, '');
    for (const { part } of batch) this.schedule(this.part(part));
    return batch.length;
  }

  /** Store messages atomically; true when the one message was claimed for `token` on the way. */
  private async insert(batch: Array<{ message: NewMessage; part: string }>, token: string): Promise<boolean> {
    const now = Date.now();
    const args: Array<string | number> = [this.prefix, now, batch.length, this.engineId, token, now + this.leaseMs];
    for (const { message: m, part } of batch) {
      const { lane: _lane, ...body } = m;
      args.push(
        m.id,
        part,
        m.name,
        JSON.stringify([m.kind, m.name]),
        JSON.stringify(body satisfies Body),
        m.group === null ? '-' : `g:${m.group}`,
        m.readyAt,
      );
    }
    const [ok, id] = await this.redis.engqInsert(...args);
    if (ok === 0) throw new DuplicateMessageError(id ?? '');
    return ok === 2;
  }

  // ── subscribers ──────────────────────────────────────────────────────

  async registerSubscriber(binding: TriggerBinding): Promise<void> {
    const parsed = SubscriberTriggerConfigSchema.safeParse(binding.config ?? {});
    if (!parsed.success) throw new Error(`durable:subscriber config: ${describeZodError(parsed.error)}`);
    const topic = parsed.data.topic ?? parsed.data.queue ?? '';
    if (topic === '') throw new Error('durable:subscriber config: topic is required');
    const settings = laneSettingsOfSubscriber(parsed.data, this.deps.config.default_queue_config);
    const key = topicLaneKey(topic, binding.functionId);
    const now = Date.now();
    await this.redis
      .multi()
      .hset(`${this.prefix}subs:${topic}`, binding.functionId, JSON.stringify(binding.config ?? {}))
      .sadd(`${this.prefix}topics`, topic)
      .sadd(`${this.prefix}names`, JSON.stringify(['topic', topic]))
      .sadd(`${this.prefix}parts`, key)
      .sadd(`${this.prefix}parts:${topic}`, key)
      .hset(`${this.prefix}bound:${key}`, this.engineId, now)
      .hdel(`${this.prefix}dormant`, key)
      .exec();
    const part = this.part(key);
    part.subscriberSettings = settings;
    part.bindings.add(binding.id);
    if (part.forgetTimer) clearTimeout(part.forgetTimer);
    part.forgetTimer = null;
    this.partOfBinding.set(binding.id, key);
    this.schedule(part);
  }

  async unregisterSubscriber(binding: TriggerBinding): Promise<void> {
    const key = this.partOfBinding.get(binding.id);
    if (!key) return;
    this.partOfBinding.delete(binding.id);
    const part = this.parts.get(key);
    if (!part) return;
    part.bindings.delete(binding.id);
    if (part.bindings.size > 0) return;
    await this.redis.hdel(`${this.prefix}bound:${key}`, this.engineId);
    // the worker disconnected (its functions went first): the subscriber stays, dormant here
    if (!this.deps.hasFunction(part.functionId)) return;
    // an explicit unsubscribe is often half of a re-registration: wait a moment
    part.forgetTimer = setTimeout(() => {
      part.forgetTimer = null;
      if (part.bindings.size > 0) return;
      this.forgetIfUnbound(part, `subscriber ${part.functionId} unsubscribed from topic ${part.name}`).catch((err: unknown) => {
        this.deps.log.error('forgetting a durable subscriber failed', { topic: part.name, error: (err as Error).message });
      });
    }, UNSUBSCRIBE_GRACE_MS);
    part.forgetTimer.unref();
  }

  /** Engines where a subscriber is bound now (heartbeat fresh). */
  private async boundEngines(key: string, now: number): Promise<number> {
    const bound = await this.redis.hgetall(`${this.prefix}bound:${key}`);
    return Object.values(bound).filter((t) => now - Number(t) < this.heartbeatMs * 3).length;
  }

  private async forgetIfUnbound(part: Part, reason: string): Promise<void> {
    if ((await this.boundEngines(part.key, Date.now())) > 0) return;
    await this.redis
      .multi()
      .hdel(`${this.prefix}subs:${part.name}`, part.functionId)
      .del(`${this.prefix}bound:${part.key}`)
      .hdel(`${this.prefix}dormant`, part.key)
      .exec();
    // nothing is lost silently: what it never received stays visible (and redrivable) in the DLQ
    const moved = await this.redis.engqDeadPart(this.prefix, part.key, part.name, reason, Date.now());
    if (moved > 0) this.deps.log.warn(`${moved} queued message(s) moved to the dead-letter queue`, { topic: part.name, reason });
  }

  /** Subscribers no engine has bound for subscriber_ttl_ms are forgotten (their messages to the DLQ). */
  private async expireSubscribers(): Promise<void> {
    const now = Date.now();
    const ttl = this.deps.config.subscriber_ttl_ms;
    for (const topic of await this.redis.smembers(`${this.prefix}topics`)) {
      for (const functionId of await this.redis.hkeys(`${this.prefix}subs:${topic}`)) {
        const key = topicLaneKey(topic, functionId);
        if ((await this.boundEngines(key, now)) > 0) continue;
        await this.redis.hsetnx(`${this.prefix}dormant`, key, now);
        const since = Number(await this.redis.hget(`${this.prefix}dormant`, key));
        if (now - since < ttl) continue;
        await this.forgetIfUnbound(this.part(key), `subscriber ${functionId} of topic ${topic} did not come back within ${ttl} ms`);
      }
    }
  }

  private subscriberSettings(configText: string): LaneSettings {
    let config: unknown = {};
    try {
      config = JSON.parse(configText);
    } catch {
      // a damaged record: defaults
    }
    const parsed = SubscriberTriggerConfigSchema.safeParse(config);
    return laneSettingsOfSubscriber(parsed.success ? parsed.data : {}, this.deps.config.default_queue_config);
  }

  functionAdded(functionId: string): void {
    for (const part of this.parts.values()) if (part.functionId === functionId) this.schedule(part);
  }

  // ── delivery ─────────────────────────────────────────────────────────

  private part(key: string): Part {
    let part = this.parts.get(key);
    if (!part) {
      const parsed = parsePartKey(key) ?? { kind: 'queue' as const, name: key, functionId: '' };
      part = {
        key,
        ...parsed,
        inflight: new Map(),
        bindings: new Set(),
        subscriberSettings: null,
        forgetTimer: null,
        scheduled: false,
        claiming: false,
        again: false,
        wanted: true,
        timer: null,
        timerAt: 0,
      };
      this.parts.set(key, part);
    }
    return part;
  }

  private settings(part: Part): LaneSettings {
    if (part.kind === 'topic') return part.subscriberSettings ?? laneSettingsOfSubscriber({}, this.deps.config.default_queue_config);
    return laneSettingsOfQueue(this.deps.config.queue_configs[part.name] ?? this.deps.config.default_queue_config);
  }

  /** This engine takes a partition's messages only when its own workers serve the function. */
  private serves(part: Part): boolean {
    if (!this.deps.hasFunction(part.functionId)) return false;
    return part.kind === 'queue' || part.bindings.size > 0;
  }

  private wake(key: string): void {
    if (this.stopped) return;
    this.schedule(this.part(key));
  }

  private schedule(part: Part): void {
    if (this.stopped) return;
    part.wanted = true;
    if (part.claiming) {
      part.again = true;
      return;
    }
    if (part.scheduled) return;
    part.scheduled = true;
    setImmediate(() => {
      part.scheduled = false;
      this.pump(part).catch((err: unknown) => {
        if (this.stopped) return;
        this.deps.log.error('queue claim failed', { queue: part.name, error: (err as Error).message });
        this.arm(part, Date.now() + STORE_ERROR_PAUSE_MS);
      });
    });
  }

  private async pump(part: Part): Promise<void> {
    if (this.stopped || !this.serves(part)) return;
    const settings = this.settings(part);
    const free = settings.concurrency - part.inflight.size;
    if (free <= 0) return;
    part.claiming = true;
    part.again = false;
    this.flushAcks();
    const token = `${this.engineId}/${++this.tokenSeq}`;
    const now = Date.now();
    let reply: string[];
    try {
      reply = await this.redis.engqClaim(
        this.prefix,
        part.key,
        part.name,
        now,
        free,
        now + this.leaseMs,
        settings.fifo ? '1' : '0',
        settings.maxAttempts,
        token,
        FIFO_SCAN,
        'visibility timeout: the engine delivering it stopped renewing its claim',
      );
    } finally {
      part.claiming = false;
    }
    if (this.stopped) return;
    const nextDue = Number(reply[0]);
    // fewer than asked: nothing more is ready now (FIFO: groups held by deliveries may free up)
    if (!settings.fifo && (reply.length - 1) / 3 < free) part.wanted = part.again;
    for (let i = 1; i + 2 < reply.length; i += 3) {
      const id = reply[i] as string;
      const body = JSON.parse(reply[i + 1] as string) as Body;
      const message: StoredMessage = {
        ...body,
        lane: part.key,
        seq: 0,
        attempts: Number(reply[i + 2]),
        lastError: null,
        failedAt: null,
      };
      part.inflight.set(id, token);
      this.deliver(part, settings, message, token);
    }
    if (part.again) this.schedule(part);
    else if (nextDue >= 0) this.arm(part, nextDue);
  }

  private arm(part: Part, at: number): void {
    if (part.timer && part.timerAt <= at) return;
    if (part.timer) clearTimeout(part.timer);
    part.timerAt = at;
    const delay = Math.max(at - Date.now(), this.settings(part).pollIntervalMs);
    part.timer = setTimeout(() => {
      part.timer = null;
      this.schedule(part);
    }, delay);
    part.timer.unref();
  }

  private deliver(part: Part, settings: LaneSettings, message: StoredMessage, token: string): void {
    deliverOnce(this.deps, settings, message)
      .then((verdict) => {
        // the handler is done: its slot is free while the outcome is written (the write goes out
        // before the next claim on the same connection, so that claim sees it: a FIFO group's lock)
        part.inflight.delete(message.id);
        const written = this.settle(part, settings, message, token, verdict);
        // more is waiting: claim now, or right after the claim in progress (which coalesces the
        // deliveries that finish meanwhile: one claim per round trip, not one per message)
        if (part.wanted || settings.fifo) this.schedule(part);
        return written;
      })
      .catch((err: unknown) => {
        part.inflight.delete(message.id);
        if (this.stopped) return;
        // its lease runs out and an engine takes it again
        this.deps.log.error('queue write failed; the message stays queued', {
          queue: part.name,
          message_id: message.id,
          error: (err as Error).message,
        });
        this.arm(part, Date.now() + STORE_ERROR_PAUSE_MS);
      });
  }

  /** Record a delivery's outcome: ack, hand back, retry with backoff, or dead letter. */
  private async settle(part: Part, settings: LaneSettings, message: StoredMessage, token: string, verdict: DeliveryVerdict): Promise<void> {
    if (verdict.kind === 'ack') {
      await this.ack(message.id, message.name);
      return;
    }
    if (verdict.kind === 'requeue') {
      await this.redis.engqRelease(this.prefix, message.id, token);
      return;
    }
    const attempts = message.attempts + 1;
    if (attempts >= settings.maxAttempts) {
      this.deps.log.warn('message moved to the dead-letter queue', {
        queue: part.name,
        message_id: message.id,
        attempts,
        error: verdict.error,
      });
      await this.redis.engqDead(this.prefix, message.id, message.name, token, attempts, verdict.error, Date.now());
      return;
    }
    const readyAt = Date.now() + backoffDelay(settings.backoffMs, attempts);
    await this.redis.engqRetry(this.prefix, message.id, message.name, token, attempts, readyAt, verdict.error, settings.fifo ? '1' : '0');
    this.arm(part, readyAt);
  }

  /** Acknowledge a delivery with the others of this turn, in one call (see ACK). */
  private ack(id: string, name: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pendingAcks.push({ id, name, resolve, reject });
      if (this.acksScheduled) return;
      this.acksScheduled = true;
      setImmediate(() => {
        this.acksScheduled = false;
        this.flushAcks();
      });
    });
  }

  /** Send the acknowledgements waiting; a claim calls it first, so it sees them (a FIFO group's lock). */
  private flushAcks(): void {
    const batch = this.pendingAcks;
    if (batch.length === 0) return;
    this.pendingAcks = [];
    const args: Array<string | number> = [this.prefix, batch.length];
    for (const a of batch) args.push(a.id, a.name);
    this.redis.engqAck(...args).then(
      () => {
        for (const a of batch) a.resolve();
      },
      (err: unknown) => {
        for (const a of batch) a.reject(err);
      },
    );
  }

  private heartbeat(): void {
    if (this.stopped) return;
    const now = Date.now();
    const pipeline = this.redis.pipeline();
    let n = 0;
    for (const part of this.parts.values()) {
      for (const id of part.inflight.keys()) {
        pipeline.zadd(`${this.prefix}p:${part.key}:inflight`, 'XX', now + this.leaseMs, id);
        n++;
      }
      if (part.bindings.size > 0) {
        pipeline.hset(`${this.prefix}bound:${part.key}`, this.engineId, now);
        n++;
      }
    }
    if (n > 0) pipeline.exec().catch(() => {});
  }

  private every(ms: number, run: () => void): void {
    const timer = setInterval(run, ms);
    timer.unref();
    this.timers.push(timer);
  }

  // ── reads: the cluster's numbers ─────────────────────────────────────

  private async depthOf(name: string): Promise<{ depth: number; inFlight: number; byPart: Map<string, number> }> {
    const keys = await this.redis.smembers(`${this.prefix}parts:${name}`);
    const pipeline = this.redis.pipeline();
    for (const key of keys) {
      pipeline.zcard(`${this.prefix}p:${key}:pending`);
      pipeline.zcard(`${this.prefix}p:${key}:delayed`);
      pipeline.zcard(`${this.prefix}p:${key}:inflight`);
    }
    const results = keys.length ? ((await pipeline.exec()) ?? []) : [];
    let depth = 0;
    let inFlight = 0;
    const byPart = new Map<string, number>();
    keys.forEach((key, i) => {
      const n = (j: number) => Number(results[i * 3 + j]?.[1] ?? 0);
      depth += n(0) + n(1);
      inFlight += n(2);
      byPart.set(key, n(2));
    });
    return { depth, inFlight, byPart };
  }

  async listTopics(): Promise<TopicRow[]> {
    const names = new Map<string, { name: string; kind: MessageKind }>();
    const add = (name: string, kind: MessageKind) => names.set(`${kind}\u0000${name}`, { name, kind });
    add('default', 'queue');
    for (const name of Object.keys(this.deps.config.queue_configs)) add(name, 'queue');
    for (const ref of await this.redis.smembers(`${this.prefix}names`)) {
      const [kind, name] = JSON.parse(ref) as [MessageKind, string];
      add(name, kind);
    }
    const rows: TopicRow[] = [];
    const sorted = [...names.values()].sort((a, b) => (a.name === b.name ? a.kind.localeCompare(b.kind) : a.name < b.name ? -1 : 1));
    for (const { name, kind } of sorted) {
      const { depth } = await this.depthOf(name);
      rows.push({
        name,
        broker_type: BROKER[kind],
        subscriber_count:
          kind === 'queue' ? this.settingsOfQueue(name).concurrency : (await this.subscribersOf(name)).filter((s) => s.active).length,
        depth,
        dlq_count: await this.redis.zcard(`${this.prefix}dlq:${name}`),
      });
    }
    return rows;
  }

  private settingsOfQueue(name: string): LaneSettings {
    return laneSettingsOfQueue(this.deps.config.queue_configs[name] ?? this.deps.config.default_queue_config);
  }

  private async subscribersOf(topic: string): Promise<Array<{ functionId: string; active: boolean; dormantSince: number | null }>> {
    const now = Date.now();
    const out: Array<{ functionId: string; active: boolean; dormantSince: number | null }> = [];
    for (const functionId of (await this.redis.hkeys(`${this.prefix}subs:${topic}`)).sort()) {
      const key = topicLaneKey(topic, functionId);
      const active = (await this.boundEngines(key, now)) > 0;
      const since = active ? null : await this.redis.hget(`${this.prefix}dormant`, key);
      out.push({ functionId, active, dormantSince: since === null ? null : Number(since) });
    }
    return out;
  }

  async topicStats(name: string): Promise<TopicStats> {
    const config = this.deps.config;
    const { depth, inFlight, byPart } = await this.depthOf(name);
    const counters = await this.redis.hgetall(`${this.prefix}cnt:${name}`);
    const dlq = await this.redis.zcard(`${this.prefix}dlq:${name}`);
    const refs = await this.redis.smembers(`${this.prefix}names`);
    const isQueue = name === 'default' || name in config.queue_configs || refs.includes(JSON.stringify(['queue', name]));
    const subscribers = await this.subscribersOf(name);
    return {
      topic: name,
      depth,
      in_flight: inFlight,
      delivered: Number(counters.delivered ?? 0),
      failed: Number(counters.failed ?? 0),
      dlq_depth: dlq,
      dlq_count: dlq,
      consumer_count: subscribers.filter((s) => s.active).length + (isQueue ? this.settingsOfQueue(name).concurrency : 0),
      config: isQueue ? (config.queue_configs[name] ?? config.default_queue_config) : null,
      subscribers: subscribers.map((s) => ({
        function_id: s.functionId,
        active: s.active,
        dormant_since: s.dormantSince,
        in_flight: byPart.get(topicLaneKey(name, s.functionId)) ?? 0,
      })),
    };
  }

  async dlqPage(name: string, offset: number, limit: number): Promise<{ messages: StoredMessage[]; total: number }> {
    const dlq = `${this.prefix}dlq:${name}`;
    // the page's ids and the total from one moment (MULTI): read apart, messages failing in between
    // gave a page of one under a total of three
    const [[, total], [, ids]] = ((await this.redis
      .multi()
      .zcard(dlq)
      .zrange(dlq, String(offset), String(offset + limit - 1))
      .exec()) ?? [
      [null, 0],
      [null, []],
    ]) as [[unknown, number], [unknown, string[]]];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(`${this.prefix}m:${id}`);
    const rows = ids.length ? ((await pipeline.exec()) ?? []) : [];
    const messages: StoredMessage[] = [];
    rows.forEach(([, value], i) => {
      const h = value as Record<string, string> | null;
      if (!h?.body) return;
      const body = JSON.parse(h.body) as Body;
      messages.push({
        ...body,
        id: ids[i] as string,
        lane: h.part ?? '',
        seq: Number(h.seq ?? 0),
        attempts: Number(h.attempts ?? 0),
        lastError: h.error ?? null,
        failedAt: h.failedAt ? Number(h.failedAt) : null,
      });
    });
    return { messages, total };
  }

  redrive(name: string, id: string | null): Promise<number> {
    return this.redis.engqRedrive(this.prefix, name, id ?? '');
  }

  async discard(name: string, id: string): Promise<boolean> {
    return (await this.redis.engqDiscard(this.prefix, name, id)) === 1;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const part of this.parts.values()) {
      if (part.timer) clearTimeout(part.timer);
      if (part.forgetTimer) clearTimeout(part.forgetTimer);
    }
    this.flushAcks();
    // what this engine still runs is handed back at once (its answers, if they come, still ack it)
    const pipeline = this.redis.pipeline();
    for (const part of this.parts.values()) {
      for (const [id, token] of part.inflight) (pipeline as unknown as QueueRedis).engqRelease(this.prefix, id, token);
      if (part.bindings.size > 0) pipeline.hdel(`${this.prefix}bound:${part.key}`, this.engineId);
    }
    await Promise.race([pipeline.exec().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
    this.sub.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
