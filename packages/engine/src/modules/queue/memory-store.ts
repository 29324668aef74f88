import {
  DuplicateMessageError,
  type LaneRef,
  type NameRef,
  type NewMessage,
  type QueueStore,
  type StoredMessage,
  type SubscriberRecord,
} from './store.ts';

/** Messages in process memory: fast, lost when the engine stops (`adapter: {name: memory}`). */
export class MemoryQueueStore implements QueueStore {
  readonly adapterName = 'memory' as const;
  private readonly byId = new Map<string, StoredMessage>();
  /** Pending messages per lane; Map insertion order is seq order. */
  private readonly lanes = new Map<string, Map<string, StoredMessage>>();
  /** Dead-lettered messages per name, in failure order. */
  private readonly dead = new Map<string, Map<string, StoredMessage>>();
  private readonly stats = new Map<string, { kind: StoredMessage['kind']; delivered: number; failed: number }>();
  private readonly subs = new Map<string, SubscriberRecord>();
  private seq = 0;

  async insert(messages: NewMessage[]): Promise<void> {
    const ids = new Set<string>();
    for (const m of messages) {
      if (this.byId.has(m.id) || ids.has(m.id)) throw new DuplicateMessageError(m.id);
      ids.add(m.id);
    }
    for (const m of messages) {
      const stored: StoredMessage = { ...m, seq: ++this.seq, attempts: 0, lastError: null, failedAt: null };
      this.byId.set(stored.id, stored);
      this.laneOf(stored.lane).set(stored.id, stored);
    }
  }

  *scanLane(lane: string, skip?: (id: string) => boolean): Iterable<StoredMessage> {
    const messages = this.lanes.get(lane);
    if (!messages) return;
    for (const message of messages.values()) if (!skip?.(message.id)) yield message;
  }

  pendingLanes(): LaneRef[] {
    const refs: LaneRef[] = [];
    for (const [lane, messages] of this.lanes) {
      const first = messages.values().next().value;
      if (first) refs.push({ lane, name: first.name, kind: first.kind });
    }
    return refs;
  }

  async ack(message: StoredMessage): Promise<void> {
    const stored = this.byId.get(message.id);
    if (!stored) return;
    // also from the DLQ: a subscriber that went away had this one in flight, and it succeeded
    this.byId.delete(stored.id);
    this.lanes.get(stored.lane)?.delete(stored.id);
    this.dead.get(stored.name)?.delete(stored.id);
    this.countOf(message).delivered++;
  }

  async retry(message: StoredMessage, attempts: number, readyAt: number, error: string): Promise<void> {
    const stored = this.byId.get(message.id);
    if (!stored || stored.failedAt !== null) return;
    stored.attempts = attempts;
    stored.readyAt = readyAt;
    stored.lastError = error;
    this.countOf(message).failed++;
  }

  async deadLetter(message: StoredMessage, attempts: number, error: string, failedAt: number): Promise<void> {
    const stored = this.byId.get(message.id);
    if (!stored || stored.failedAt !== null) return;
    this.lanes.get(stored.lane)?.delete(stored.id);
    Object.assign(stored, { attempts, lastError: error, failedAt, seq: ++this.seq });
    this.deadOf(stored.name).set(stored.id, stored);
    this.countOf(message).failed++;
  }

  async deadLetterLane(lane: string, error: string, failedAt: number): Promise<number> {
    const messages = [...(this.lanes.get(lane)?.values() ?? [])];
    for (const m of messages) {
      this.lanes.get(lane)?.delete(m.id);
      Object.assign(m, { lastError: error, failedAt, seq: ++this.seq });
      this.deadOf(m.name).set(m.id, m);
    }
    return messages.length;
  }

  async redrive(name: string, id: string | null, now: number): Promise<StoredMessage[]> {
    const dead = this.dead.get(name);
    if (!dead) return [];
    const picked = id === null ? [...dead.values()] : dead.has(id) ? [dead.get(id) as StoredMessage] : [];
    for (const m of picked) {
      dead.delete(m.id);
      Object.assign(m, { attempts: 0, readyAt: now, lastError: null, failedAt: null, seq: ++this.seq });
      this.laneOf(m.lane).set(m.id, m);
    }
    return picked.map((m) => ({ ...m }));
  }

  async discard(name: string, id: string): Promise<boolean> {
    const dead = this.dead.get(name);
    if (!dead?.delete(id)) return false;
    this.byId.delete(id);
    return true;
  }

  dlqPage(name: string, offset: number, limit: number): { messages: StoredMessage[]; total: number } {
    const all = [...(this.dead.get(name)?.values() ?? [])];
    return { messages: all.slice(offset, offset + limit).map((m) => ({ ...m })), total: all.length };
  }

  dlqCount(name: string): number {
    return this.dead.get(name)?.size ?? 0;
  }

  pendingCount(name: string): number {
    let n = 0;
    for (const m of this.byId.values()) if (m.name === name && m.failedAt === null) n++;
    return n;
  }

  names(): NameRef[] {
    const seen = new Map<string, NameRef>();
    const add = (name: string, kind: StoredMessage['kind']) => seen.set(`${kind}:${name}`, { name, kind });
    for (const m of this.byId.values()) add(m.name, m.kind);
    for (const [name, s] of this.stats) add(name, s.kind);
    return [...seen.values()];
  }

  counters(name: string): { delivered: number; failed: number } {
    const s = this.stats.get(name);
    return { delivered: s?.delivered ?? 0, failed: s?.failed ?? 0 };
  }

  subscribers(): SubscriberRecord[] {
    return [...this.subs.values()];
  }
  async saveSubscriber(record: SubscriberRecord): Promise<void> {
    this.subs.set(JSON.stringify([record.topic, record.functionId]), record);
  }
  async deleteSubscriber(topic: string, functionId: string): Promise<void> {
    this.subs.delete(JSON.stringify([topic, functionId]));
  }

  close(): void {}

  private laneOf(lane: string): Map<string, StoredMessage> {
    return getOrCreate(this.lanes, lane);
  }

  private deadOf(name: string): Map<string, StoredMessage> {
    return getOrCreate(this.dead, name);
  }

  private countOf(message: StoredMessage): { delivered: number; failed: number } {
    let s = this.stats.get(message.name);
    if (!s) {
      s = { kind: message.kind, delivered: 0, failed: 0 };
      this.stats.set(message.name, s);
    }
    return s;
  }
}

function getOrCreate(maps: Map<string, Map<string, StoredMessage>>, key: string): Map<string, StoredMessage> {
  let messages = maps.get(key);
  if (!messages) {
    messages = new Map();
    maps.set(key, messages);
  }
  return messages;
}
