/**
 * The SSE event store of one HTTP session (src/http/replay.ts): what it keeps for `Last-Event-ID`
 * is capped (finished streams go first, then the oldest events), the session's GET stream keeps
 * its last 100 events, and ids name a stream and a position. The end-to-end behaviour is in
 * streams.test.ts; this pins the bounds, which a long-lived session would otherwise grow past.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { EventStore } from '../src/http/replay.ts';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: `line ${n}` },
});

describe('EventStore', () => {
  it('names events <stream>-<seq> and finds them while kept', () => {
    const store = new EventStore(1 << 20);
    const a = store.create('request');
    const b = store.create('request');
    a.send(note(1));
    a.send(note(2));
    b.send(note(3));
    expect(store.find(`${a.id}-2`)).toEqual({ stream: a, seq: 2 });
    expect(store.find(`${b.id}-0`)).toEqual({ stream: b, seq: 0 });
    expect(store.find(`${a.id}-3`)).toBeUndefined(); // not sent yet
    for (const bad of ['', 'x', '1', '1-', '-1', '1-2-3', `${a.id}-1 junk`]) expect(store.find(bad), bad).toBeUndefined();
  });

  it('stays under its cap: finished streams are dropped first, then the oldest events of the others', () => {
    const store = new EventStore(4000);
    const done = store.create('request');
    for (let i = 0; i < 10; i++) done.send(note(i));
    done.finish();
    const live = store.create('request');
    for (let i = 0; i < 200; i++) {
      live.send(note(i));
      expect(store.bytes).toBeLessThanOrEqual(4000);
    }
    expect(store.find(`${done.id}-1`)).toBeUndefined();
    expect(live.bytes).toBe(store.bytes);
    // the newest events of the live stream are still there to replay
    expect(store.find(`${live.id}-199`)?.stream).toBe(live);
  });

  it("keeps the last 100 events of the session's GET stream", () => {
    const store = new EventStore(1 << 20);
    const standalone = store.create('standalone');
    for (let i = 0; i < 250; i++) standalone.send(note(i));
    // exactly the texts of events 151..250 (seq is i + 1)
    const text = (i: number) => `id: ${standalone.id}-${i + 1}\nevent: message\ndata: ${JSON.stringify(note(i))}\n\n`;
    let expected = 0;
    for (let i = 150; i < 250; i++) expected += text(i).length;
    expect(standalone.bytes).toBe(expected);
    expect(store.bytes).toBe(expected);
  });

  it('a finished stream takes nothing more, and clear() forgets everything', () => {
    const store = new EventStore(1 << 20);
    const s = store.create('request');
    s.send(note(1));
    s.finish();
    s.send(note(2));
    expect(s.lastSeq).toBe(1);
    store.clear();
    expect(store.bytes).toBe(0);
    expect(store.find(`${s.id}-1`)).toBeUndefined();
  });
});
