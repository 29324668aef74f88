/**
 * Moving a session's active path back, as Retry / Regenerate / Edit do (harness::regenerate,
 * harness::edit): session::set-active-leaf to an earlier entry or to before the first one, never
 * while the session is working; the entries left behind stay readable on their branch.
 */
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistant, failure, type SessionRig, startSessionRig, user } from './session-helpers.ts';

let rig: SessionRig;
let c: EngClient;
const call = <T = any>(fn: string, payload: unknown) => c.call<T>(fn, payload);
const textsOf = (page: { messages: any[] }) => page.messages.map((m) => m.message.content[0].text);

beforeAll(async () => {
  rig = await startSessionRig();
  c = rig.client;
});
afterAll(() => rig?.stop());

describe('session::set-active-leaf for a rewind', () => {
  it('null empties the active path: the next append is a new root, the old transcript stays on its branch', async () => {
    const { session_id } = await call('session::create', {});
    await call('session::append', { session_id, message: user('first question') });
    const answer = await call('session::append', { session_id, message: assistant('first answer') });

    expect(await call('session::set-active-leaf', { session_id, entry_id: null })).toEqual({ active_leaf: null });
    expect((await call('session::messages', { session_id })).messages).toEqual([]);
    const root = await call('session::append', { session_id, message: user('edited question') });
    expect(root.parent_id).toBeNull();
    expect(textsOf(await call('session::messages', { session_id }))).toEqual(['edited question']);
    expect(textsOf(await call('session::messages', { session_id, from_entry_id: answer.entry_id }))).toEqual([
      'first question',
      'first answer',
    ]);
  });

  it('is refused while the session is working (a running turn appends under the leaf), unless it does not move', async () => {
    const { session_id } = await call('session::create', {});
    const q = await call('session::append', { session_id, message: user('q') });
    const a = await call('session::append', { session_id, message: assistant('a') });
    await call('session::set-status', { session_id, status: 'working' });
    const refused = await failure(call('session::set-active-leaf', { session_id, entry_id: q.entry_id }));
    expect(refused.code).toBe('session/turn_active');
    expect(refused.message).toContain('working');
    expect((await failure(call('session::set-active-leaf', { session_id, entry_id: null }))).code).toBe('session/turn_active');
    // staying where it is changes nothing and is answered
    expect(await call('session::set-active-leaf', { session_id, entry_id: a.entry_id })).toEqual({ active_leaf: a.entry_id });
    expect(textsOf(await call('session::messages', { session_id }))).toEqual(['q', 'a']);
    await call('session::set-status', { session_id, status: 'error', reason: 'failed' });
    expect(await call('session::set-active-leaf', { session_id, entry_id: q.entry_id })).toEqual({ active_leaf: q.entry_id });
    // null is a value of its own: a missing entry_id is still named
    const missing = await failure(call('session::set-active-leaf', { session_id }));
    expect(missing.code).toBe('session/invalid_request');
    expect(missing.message).toContain('entry_id');
  });
});
