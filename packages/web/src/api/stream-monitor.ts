import type { FunctionRef, TriggerRef } from '@eng/sdk';
import { useSyncExternalStore } from 'react';
import { basePath } from '../lib/base-path.ts';
import { engine } from './client.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';

/**
 * The live stream monitor (seed 2.5). Two ways to hear stream events:
 *  - `socket`: the streams WebSocket that eng-console proxies at `/ws/streams`, with the join/leave
 *    protocol of engine-protocol §6.2 (a `sync` with the current items follows each join);
 *  - `triggers`: where the serving server has no `/ws/streams` (the console worker serves only
 *    `/ws`), a hidden function of this tab bound with one `stream` trigger per subscription.
 * The page probes the socket once and falls back to triggers when it does not stay open.
 * The monitor outlives the page, so subscriptions and the buffer survive navigation.
 */

export type Direction = 'inbound' | 'outbound' | 'system';
export type Transport = 'probing' | 'socket' | 'triggers';

export interface MonitorMessage {
  seq: number;
  at: number;
  direction: Direction;
  stream?: string;
  group?: string;
  itemId?: string | null;
  /** sync | create | update | delete | event:<type> | unauthorized | join | leave | bind | unbind | connected | … */
  event: string;
  data: unknown;
  bytes: number;
}

export interface Subscription {
  key: string;
  stream: string;
  group: string;
  subscriptionId: string;
  status: 'pending' | 'active' | 'refused';
}

export interface MonitorSnapshot {
  transport: Transport;
  transportNote: string;
  /** Oldest first; the page reverses it. */
  messages: MonitorMessage[];
  held: number;
  paused: boolean;
  subscriptions: Subscription[];
  counters: { total: number; inbound: number; outbound: number; system: number; bytes: number };
}

export const BUFFER_CAP = 5000;
const CONFIRM_OPEN_MS = 400;
const RECONNECT_MS = 3000;

function subKey(stream: string, group: string): string {
  return `${stream}\u0000${group}`;
}

/** Where the monitor keeps its subscriptions between reloads (per origin, like the theme). */
export const SUBSCRIPTIONS_KEY = 'eng-stream-subscriptions';

function loadSubscriptions(): Array<[string, string]> {
  try {
    const raw = JSON.parse(localStorage.getItem(SUBSCRIPTIONS_KEY) ?? '[]') as unknown;
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (e): e is [string, string] => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && typeof e[1] === 'string',
    );
  } catch {
    return [];
  }
}

function saveSubscriptions(subs: Array<[string, string]>): void {
  try {
    if (subs.length) localStorage.setItem(SUBSCRIPTIONS_KEY, JSON.stringify(subs));
    else localStorage.removeItem(SUBSCRIPTIONS_KEY);
  } catch {
    // storage full or disabled: subscriptions last for this page only
  }
}

function sizeOf(value: unknown): number {
  try {
    return typeof value === 'string' ? value.length : (JSON.stringify(value) ?? '').length;
  } catch {
    return 0;
  }
}

class StreamMonitor {
  private transport: Transport = 'probing';
  private transportNote = 'checking for the streams socket…';
  private messages: MonitorMessage[] = [];
  private heldMessages: MonitorMessage[] = [];
  private paused = false;
  private seq = 0;
  private counters = { total: 0, inbound: 0, outbound: 0, system: 0, bytes: 0 };
  private readonly subs = new Map<string, Subscription>();
  private readonly listeners = new Set<() => void>();
  private snap: MonitorSnapshot | undefined;
  private notifyTimer: ReturnType<typeof setTimeout> | undefined;

  private ws: WebSocket | undefined;
  private confirmed = false;
  private failedOpens = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private fn: FunctionRef | undefined;
  private readonly bindings = new Map<string, TriggerRef>();
  private readonly tab = Math.random().toString(36).slice(2, 10);

  constructor() {
    // subscriptions outlive a reload (issue 19 §11): restored before the socket opens, joined once it does
    for (const [stream, group] of loadSubscriptions()) this.subscribe(stream, group);
    this.openSocket();
  }

  private saveSubscriptions(): void {
    saveSubscriptions([...this.subs.values()].map((s) => [s.stream, s.group]));
  }

  // ── store plumbing (useSyncExternalStore) ──────────────────────────────
  listen = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): MonitorSnapshot => {
    this.snap ??= {
      transport: this.transport,
      transportNote: this.transportNote,
      messages: this.messages.slice(),
      held: this.heldMessages.length,
      paused: this.paused,
      subscriptions: [...this.subs.values()],
      counters: { ...this.counters },
    };
    return this.snap;
  };

  /** Bursts of events re-render the page at most every 50 ms. */
  private changed(): void {
    this.snap = undefined;
    this.notifyTimer ??= setTimeout(() => {
      this.notifyTimer = undefined;
      for (const listener of this.listeners) listener();
    }, 50);
  }

  private record(m: Omit<MonitorMessage, 'seq' | 'at' | 'bytes'> & { bytes?: number }): void {
    const message: MonitorMessage = { ...m, seq: ++this.seq, at: Date.now(), bytes: m.bytes ?? sizeOf(m.data) };
    this.counters.total++;
    this.counters[m.direction]++;
    this.counters.bytes += message.bytes;
    // paused: keep hearing, hold the lines back so nothing is lost (the reference dropped them)
    if (this.paused) {
      this.heldMessages.push(message);
      if (this.heldMessages.length > BUFFER_CAP) this.heldMessages.shift();
    } else {
      this.messages.push(message);
      if (this.messages.length > BUFFER_CAP) this.messages.splice(0, this.messages.length - BUFFER_CAP);
    }
    this.changed();
  }

  // ── the streams socket ──────────────────────────────────────────────────
  private openSocket(): void {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}${basePath()}ws/streams`;
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      this.switchToTriggers('the browser refused the streams socket URL');
      return;
    }
    this.ws = ws;
    this.confirmed = false;
    let confirmTimer: ReturnType<typeof setTimeout> | undefined;
    ws.onopen = () => {
      // the proxy accepts first and closes 1011 when the engine side is unreachable: wait a moment
      confirmTimer = setTimeout(() => {
        if (ws.readyState !== WebSocket.OPEN) return;
        this.confirmed = true;
        this.failedOpens = 0;
        this.transport = 'socket';
        this.transportNote = 'streams WebSocket at /ws/streams';
        this.record({ direction: 'system', event: 'connected', data: { url } });
        for (const sub of this.subs.values()) this.sendJoin(sub);
      }, CONFIRM_OPEN_MS);
    };
    ws.onmessage = (e) => this.onSocketMessage(typeof e.data === 'string' ? e.data : '');
    ws.onclose = (e) => {
      clearTimeout(confirmTimer);
      if (this.ws !== ws) return;
      this.ws = undefined;
      if (this.transport === 'triggers') return;
      if (!this.confirmed) {
        this.failedOpens++;
        // never got a working socket: this server has no /ws/streams (or no engine behind it)
        if (this.transport === 'probing' || this.failedOpens >= 3) {
          this.switchToTriggers(e.reason || `the server does not offer /ws/streams (close ${e.code})`);
          return;
        }
      } else {
        this.record({ direction: 'system', event: 'disconnected', data: { code: e.code, reason: e.reason } });
        for (const sub of this.subs.values()) sub.status = 'pending';
      }
      this.reconnectTimer = setTimeout(() => this.openSocket(), RECONNECT_MS);
    };
  }

  private onSocketMessage(text: string): void {
    let msg: {
      streamName?: string;
      groupId?: string;
      id?: string | null;
      event?: { type?: string; data?: unknown; event?: { type?: string; data?: unknown } };
    };
    try {
      msg = JSON.parse(text);
    } catch {
      this.record({ direction: 'system', event: 'unreadable', data: text, bytes: text.length });
      return;
    }
    this.onEvent(msg, text.length);
  }

  /** One stream event, from the socket or a `stream` trigger (same camelCase shape, stream README). */
  private onEvent(
    msg: {
      streamName?: string;
      groupId?: string;
      id?: string | null;
      event?: { type?: string; data?: unknown; event?: { type?: string; data?: unknown } };
    },
    bytes?: number,
  ): void {
    const type = msg.event?.type ?? 'message';
    const custom = type === 'event' ? msg.event?.event : undefined;
    if (type === 'unauthorized' && msg.streamName !== undefined && msg.groupId !== undefined) {
      const sub = this.subs.get(subKey(msg.streamName, msg.groupId));
      if (sub) sub.status = 'refused';
    }
    this.record({
      direction: 'inbound',
      stream: msg.streamName,
      group: msg.groupId,
      itemId: msg.id ?? null,
      event: custom ? `event:${custom.type ?? '?'}` : type,
      data: custom ? custom.data : msg.event?.data,
      bytes,
    });
  }

  private sendJoin(sub: Subscription): void {
    const frame = { type: 'join', data: { subscriptionId: sub.subscriptionId, streamName: sub.stream, groupId: sub.group } };
    this.ws?.send(JSON.stringify(frame));
    sub.status = 'active';
    this.record({ direction: 'outbound', stream: sub.stream, group: sub.group, event: 'join', data: frame });
  }

  // ── the trigger fallback ────────────────────────────────────────────────
  private switchToTriggers(why: string): void {
    clearTimeout(this.reconnectTimer);
    this.transport = 'triggers';
    this.transportNote = 'stream triggers bound from this tab (no /ws/streams here)';
    this.record({ direction: 'system', event: 'fallback', data: { reason: why, using: 'stream triggers' } });
    for (const sub of this.subs.values()) this.bind(sub);
  }

  private bind(sub: Subscription): void {
    const client = engine();
    this.fn ??= client.registerFunction(
      `${UI_FUNCTION_PREFIX}${this.tab}::stream`,
      (payload: Parameters<StreamMonitor['onEvent']>[0]) => {
        this.onEvent(payload ?? {});
        return null;
      },
      { description: 'console UI: live stream monitor', metadata: { internal: true, 'eng.ui': true } },
    );
    const config = { stream_name: sub.stream, group_id: sub.group };
    this.bindings.set(sub.key, client.registerTrigger({ type: 'stream', function_id: this.fn.id, config }));
    sub.status = 'active';
    this.record({ direction: 'outbound', stream: sub.stream, group: sub.group, event: 'bind', data: { type: 'stream', config } });
  }

  // ── what the page can do ────────────────────────────────────────────────
  subscribe(stream: string, group: string): void {
    const key = subKey(stream, group);
    if (this.subs.has(key)) return;
    const sub: Subscription = {
      key,
      stream,
      group,
      subscriptionId: `console-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      status: 'pending',
    };
    this.subs.set(key, sub);
    this.saveSubscriptions();
    if (this.transport === 'triggers') this.bind(sub);
    else if (this.ws?.readyState === WebSocket.OPEN && this.confirmed) this.sendJoin(sub);
    else this.changed();
  }

  unsubscribe(key: string): void {
    const sub = this.subs.get(key);
    if (!sub) return;
    this.subs.delete(key);
    this.saveSubscriptions();
    if (this.transport === 'triggers') {
      this.bindings.get(key)?.unregister();
      this.bindings.delete(key);
      this.record({ direction: 'outbound', stream: sub.stream, group: sub.group, event: 'unbind', data: { type: 'stream' } });
    } else if (this.ws?.readyState === WebSocket.OPEN) {
      const frame = { type: 'leave', data: { subscriptionId: sub.subscriptionId, streamName: sub.stream, groupId: sub.group } };
      this.ws.send(JSON.stringify(frame));
      this.record({ direction: 'outbound', stream: sub.stream, group: sub.group, event: 'leave', data: frame });
    } else {
      this.changed();
    }
  }

  isSubscribed(stream: string, group: string): boolean {
    return this.subs.has(subKey(stream, group));
  }

  setPaused(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (!paused && this.heldMessages.length) {
      this.messages = this.messages.concat(this.heldMessages).slice(-BUFFER_CAP);
      this.heldMessages = [];
    }
    this.changed();
  }

  clear(): void {
    this.messages = [];
    this.heldMessages = [];
    this.counters = { total: 0, inbound: 0, outbound: 0, system: 0, bytes: 0 };
    this.changed();
  }
}

let monitor: StreamMonitor | undefined;

function getMonitor(): StreamMonitor {
  monitor ??= new StreamMonitor();
  return monitor;
}

export function useStreamMonitor(): MonitorSnapshot {
  const m = getMonitor();
  return useSyncExternalStore(m.listen, m.snapshot);
}

export const streamMonitor = {
  subscribe: (stream: string, group: string) => getMonitor().subscribe(stream, group),
  unsubscribe: (key: string) => getMonitor().unsubscribe(key),
  setPaused: (paused: boolean) => getMonitor().setPaused(paused),
  clear: () => getMonitor().clear(),
  key: subKey,
};
