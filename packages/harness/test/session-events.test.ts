/**
 * The session store's six trigger types (console-worker.md §2.2): each fires with the reference
 * payload, bindings filter by session_id, roles and metadata, and a malformed binding config is
 * refused naming the field.
 */
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/harness.ts';
import { recordEvents } from '../src/shared/test-support.ts';
import { assistant, type SessionRig, startSessionRig, text, user } from './session-helpers.ts';

let rig: SessionRig;
let c: EngClient;
const call = <T = any>(fn: string, payload: unknown) => c.call<T>(fn, payload);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  rig = await startSessionRig();
  c = rig.client;
});
afterAll(() => rig?.stop());

describe('session trigger types', () => {
  it('fire with the reference payloads for create, append, update, status, meta and delete', async () => {
    const tenant = { owner: `u-${Date.now()}` };
    const created = await recordEvents(c, 'session::created', { metadata: tenant });
    const added = await recordEvents(c, 'session::message-added', { metadata: tenant });
    const updated = await recordEvents(c, 'session::message-updated', { metadata: tenant });
    const status = await recordEvents(c, 'session::status-changed', { metadata: tenant });
    const meta = await recordEvents(c, 'session::meta-updated', { metadata: tenant });
    const deleted = await recordEvents(c, 'session::deleted', { metadata: tenant });

    const { session_id, meta: m } = await call('session::create', { title: 'T', description: 'D', metadata: tenant });
    const u = await call('session::append', { session_id, message: user('hi'), entry_id: 'e_u1', origin: { turn_id: 't1' } });
    const a = await call('session::append', { session_id, message: assistant(''), origin: { turn_id: 't1' } });
    await call('session::update-message', { session_id, entry_id: a.entry_id, content: [text('hel')], origin: { turn_id: 't1' } });
    await call('session::update-message', { session_id, entry_id: a.entry_id, content: [text('hello')], origin: { turn_id: 't1' } });
    await call('session::set-status', { session_id, status: 'working', reason: 'turn' });
    await call('session::set-status', { session_id, status: 'working', reason: 'turn' }); // no change: no event
    await call('session::set-meta', { session_id, title: 'T2', metadata: tenant });
    await call('session::delete', { session_id });

    await waitFor(() => deleted.events.length === 1 && updated.events.length === 2, 5000);
    expect(created.events).toEqual([{ session_id, title: 'T', description: 'D', status: 'idle', created_at: m.created_at }]);
    expect(added.events).toEqual([
      {
        session_id,
        entry_id: 'e_u1',
        parent_id: null,
        message: user('hi'),
        origin: { turn_id: 't1' },
        timestamp: u.timestamp,
        revision: 0,
      },
      {
        session_id,
        entry_id: a.entry_id,
        parent_id: 'e_u1',
        message: assistant(''),
        origin: { turn_id: 't1' },
        timestamp: a.timestamp,
        revision: 0,
      },
    ]);
    const byRevision = [...updated.events].sort((x, y) => x.revision - y.revision);
    expect(byRevision).toEqual([
      {
        session_id,
        entry_id: a.entry_id,
        message: { ...assistant(''), content: [text('hel')] },
        revision: 1,
        origin: { turn_id: 't1' },
        timestamp: expect.any(Number),
      },
      {
        session_id,
        entry_id: a.entry_id,
        message: { ...assistant(''), content: [text('hello')] },
        revision: 2,
        origin: { turn_id: 't1' },
        timestamp: expect.any(Number),
      },
    ]);
    expect(status.events).toEqual([
      { session_id, status: 'working', previous_status: 'idle', status_reason: 'turn', timestamp: expect.any(Number) },
    ]);
    expect(meta.events).toEqual([{ session_id, title: 'T2', description: 'D', metadata: tenant, timestamp: expect.any(Number) }]);
    expect(deleted.events).toEqual([{ session_id, timestamp: expect.any(Number) }]);
    for (const r of [created, added, updated, status, meta, deleted]) r.unbind();
  });

  it('filter by session_id, roles and metadata subset', async () => {
    const one = await call('session::create', { metadata: { team: 'a', env: 'prod' } });
    const two = await call('session::create', { metadata: { team: 'b' } });
    const onlyOne = await recordEvents(c, 'session::message-added', { session_id: one.session_id });
    const assistants = await recordEvents(c, 'session::message-added', { roles: ['assistant'], metadata: { team: 'a' } });
    const teamB = await recordEvents(c, 'session::message-added', { metadata: { team: 'b' } });

    for (const s of [one, two]) {
      await call('session::append', { session_id: s.session_id, message: user('q') });
      await call('session::append', { session_id: s.session_id, message: assistant('a') });
      await call('session::append', { session_id: s.session_id, custom: { custom_type: 'note' } });
    }
    await waitFor(() => onlyOne.events.length === 3 && teamB.events.length === 3 && assistants.events.length === 1, 5000);
    await sleep(200); // nothing more arrives
    expect(onlyOne.events.every((e) => e.session_id === one.session_id)).toBe(true);
    expect(assistants.events).toHaveLength(1);
    expect(assistants.events[0]).toMatchObject({ session_id: one.session_id, message: { role: 'assistant' } });
    expect(teamB.events.map((e) => e.message?.role ?? e.custom?.custom_type)).toEqual(['user', 'assistant', 'note']);
    for (const r of [onlyOne, assistants, teamB]) r.unbind();
  });

  it('refuses malformed binding configs, naming the field', async () => {
    const errors: string[] = [];
    const bindings: Array<{ unbind(): void }> = [];
    const off = c.on('error', (e) => errors.push(e.message));
    for (const [type, config] of [
      ['session::created', { session_id: 's' }],
      ['session::message-added', { roles: ['nobody'] }],
      ['session::status-changed', { roles: ['user'] }],
      ['session::deleted', { metadata: 'x' }],
    ] as const) {
      bindings.push(await recordEvents(c, type, config));
    }
    await waitFor(() => errors.length >= 4, 5000);
    off();
    for (const b of bindings) b.unbind();
    expect(errors.join('\n')).toMatch(/session::created trigger config: .*session_id/);
    expect(errors.join('\n')).toMatch(/roles\.0: role must be one of/);
    expect(errors.join('\n')).toMatch(/session::status-changed trigger config: .*roles/);
    expect(errors.join('\n')).toMatch(/metadata must be an object/);
  });
});
