/**
 * Issue 24 item 9: the session store's quotas, against a real engine (file-backed state) and the
 * real worker, with small limits set through the session-manager configuration entry. One
 * message (append, append-many, update-message, custom entries), one session's bytes, all
 * sessions' bytes and the number of sessions: each refuses with a clear error naming the limit
 * and the usage, nothing stored changes, deleting frees the quota, and the usage survives a
 * restart of the engine and the worker (records written before the quotas are counted at start).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/harness.ts';
import { startRole, testClient } from '../src/shared/test-support.ts';
import { failure, type SessionRig, startSessionRig, text, user } from './session-helpers.ts';

const LIMITS = { max_message_bytes: 4096, max_session_bytes: 16_384, max_total_bytes: 40_000, max_sessions: 5 };
/** Decoded size of the test attachments: three fit a session, a fourth does not. */
const FILE = 5000;

let rig: SessionRig;
let c: EngClient;
const call = <T = any>(fn: string, payload: unknown) => c.call<T>(fn, payload);
const file = (session_id: string, name = 'f.bin', size = FILE) =>
  call('session::put-attachment', { session_id, name, data: Buffer.alloc(size, 7).toString('base64') });
const attachmentIds = async (session_id: string) =>
  (await call('session::list-attachments', { session_id })).attachments.map((a: any) => a.attachment_id);
const transcript = async (session_id: string) => (await call('session::messages', { session_id, include_custom: true })).messages;

/** Every session gone, so each test starts from an empty store. */
async function clear(): Promise<void> {
  for (const s of (await call('session::list', { limit: 500 })).sessions) await call('session::delete', { session_id: s.session_id });
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eng-session-quotas-'));
  rig = await startSessionRig({ stateFile: join(dir, 'state.db'), dataDir: join(dir, 'data') });
  c = rig.client;
  const settings = (await call('configuration::get', { id: 'session-manager' })).value;
  await call('configuration::set', { id: 'session-manager', value: { ...settings, ...LIMITS } });
  // the worker reloads the entry through a trigger: a probe shows when the new limits hold
  const probe = (await call('session::create', {})).session_id;
  await waitFor(
    () =>
      failure(call('session::append', { session_id: probe, message: user('x'.repeat(5000)) })).then(
        (e) => e.code === 'session/message_too_large',
      ),
    10_000,
  );
  await clear();
}, 60_000);
afterAll(() => rig?.stop());

describe('one message: max_message_bytes', () => {
  it('refuses a message, a custom entry, a batch and a growing update over the limit; the transcript stays as it was', async () => {
    const { session_id } = await call('session::create', { title: 'messages' });
    const first = await call('session::append', { session_id, message: user('hello') });
    const before = await transcript(session_id);

    const big = await failure(call('session::append', { session_id, message: user('x'.repeat(5000)) }));
    expect(big.code).toBe('session/message_too_large');
    expect(big.message).toMatch(
      /^session\/message_too_large: session::append: the message is \d+ bytes \(\d\.\d KiB\) stored, over max_message_bytes \(4096 bytes \(4\.0 KiB\)\); store large files with session::put-attachment and refer to them, or raise max_message_bytes in the session-manager configuration entry \(configuration::set\)$/,
    );
    const custom = await failure(call('session::append', { session_id, custom: { custom_type: 'note', data: 'y'.repeat(5000) } }));
    expect(custom.code).toBe('session/message_too_large');
    // all or nothing: the small messages before the big one are not appended either
    const batch = await failure(call('session::append-many', { session_id, messages: [user('one'), user('two'), user('z'.repeat(5000))] }));
    expect(batch.code).toBe('session/message_too_large');
    expect(batch.message).toContain('session::append-many');
    expect(await transcript(session_id)).toEqual(before);
    expect((await call('session::get', { session_id })).meta.message_count).toBe(1);

    // a streaming writer's message grows until an update would cross the limit
    const answer = await call('session::append', { session_id, message: { role: 'assistant', content: [] } });
    expect(await call('session::update-message', { session_id, entry_id: answer.entry_id, content: [text('a'.repeat(3000))] })).toEqual({
      updated: true,
      revision: 1,
    });
    const grown = await failure(
      call('session::update-message', { session_id, entry_id: answer.entry_id, content: [text('a'.repeat(5000))] }),
    );
    expect(grown.code).toBe('session/message_too_large');
    expect(grown.message).toContain('session::update-message');
    const { entry } = await call('session::get-message', { session_id, entry_id: answer.entry_id });
    expect(entry).toMatchObject({ revision: 1, message: { content: [text('a'.repeat(3000))] } });
    // shrinking always passes, and a message within the limit is taken
    expect(await call('session::update-message', { session_id, entry_id: answer.entry_id, content: [text('short')] })).toMatchObject({
      updated: true,
      revision: 2,
    });
    expect((await call('session::append', { session_id, message: user('y'.repeat(3000)) })).entry_id).toMatch(/^e_/);
    expect((await transcript(session_id))[0].entry_id).toBe(first.entry_id);
    await clear();
  });
});

describe('one session: max_session_bytes', () => {
  it('refuses the write that would overfill a session, naming the limit and the usage; deleting an attachment frees room', async () => {
    const { session_id } = await call('session::create', { title: 'full' });
    const kept = [];
    for (let i = 0; i < 3; i++) kept.push((await file(session_id, `f${i}.bin`)).attachment.attachment_id);
    const over = await failure(file(session_id, 'f3.bin'));
    expect(over.code).toBe('session/quota_exceeded');
    expect(over.message).toMatch(
      new RegExp(
        `^session/quota_exceeded: session::put-attachment: session ${session_id} holds 1\\d{4} bytes \\(1\\d\\.\\d KiB\\); 5000 bytes \\(4\\.9 KiB\\) more is over max_session_bytes \\(16384 bytes \\(16\\.0 KiB\\)\\)\\. Delete attachments or the session to free space \\(session::fork copies the part worth keeping\\), or raise max_session_bytes in the session-manager configuration entry \\(configuration::set\\)$`,
      ),
    );
    expect(await attachmentIds(session_id)).toEqual(kept);
    // messages count against the same quota
    const msg = await failure(call('session::append', { session_id, message: user('m'.repeat(2000)) }));
    expect(msg.code).toBe('session/quota_exceeded');
    expect(msg.message).toContain('max_session_bytes');
    expect(await transcript(session_id)).toEqual([]);
    // so does the session's own record (a large draft)
    const draft = await failure(call('session::set-draft', { session_id, draft: 'd'.repeat(3000) }));
    expect(draft.code).toBe('session/quota_exceeded');
    expect((await call('session::get', { session_id })).meta).not.toHaveProperty('draft');

    expect(await call('session::delete-attachment', { session_id, attachment_id: kept[0] })).toEqual({ deleted: true });
    const again = await file(session_id, 'f3.bin');
    expect(await attachmentIds(session_id)).toEqual([kept[1], kept[2], again.attachment.attachment_id]);
    await clear();
  });
});

describe('all sessions: max_total_bytes', () => {
  it('refuses a write once all sessions together would pass the limit; deleting a session frees it', async () => {
    const a = (await call('session::create', { title: 'a' })).session_id;
    const b = (await call('session::create', { title: 'b' })).session_id;
    for (const s of [a, b]) for (let i = 0; i < 3; i++) await file(s);
    const third = (await call('session::create', { title: 'c' })).session_id;
    await file(third);
    const over = await failure(file(third));
    expect(over.code).toBe('session/quota_exceeded');
    expect(over.message).toMatch(
      /^session\/quota_exceeded: session::put-attachment: all sessions hold 3\d{4} bytes \(3\d\.\d KiB\); 5000 bytes \(4\.9 KiB\) more is over max_total_bytes \(40000 bytes \(39\.1 KiB\)\)\. Delete sessions to free space, or raise max_total_bytes in the session-manager configuration entry \(configuration::set\)$/,
    );
    expect(await attachmentIds(third)).toHaveLength(1);
    // a fork is a new session holding copies (the attachments its messages refer to): refused the same way
    const m = await call('session::append', { session_id: third, message: user('fork me') });
    const [attached] = (await call('session::list-attachments', { session_id: a })).attachments;
    const block = { type: 'file', attachment_id: attached.attachment_id, name: attached.name, mime: attached.mime, size: attached.size };
    const linked = await call('session::append', { session_id: a, message: { role: 'user', content: [block] } });
    const fork = await failure(call('session::fork', { session_id: a, entry_id: linked.entry_id }));
    expect(fork.code).toBe('session/quota_exceeded');
    expect(fork.message).toContain('session::fork: all sessions hold');
    expect((await call('session::list', {})).sessions).toHaveLength(3);

    expect(await call('session::delete', { session_id: a })).toEqual({ deleted: true });
    await file(third);
    expect(await attachmentIds(third)).toHaveLength(2);
    expect((await call('session::fork', { session_id: third, entry_id: m.entry_id })).session_id).toMatch(/^s_/);
    await clear();
  });
});

describe('the number of sessions: max_sessions', () => {
  it('refuses create, ensure and fork beyond the limit; an existing id still ensures; deleting makes room', async () => {
    const ids: string[] = [];
    for (let i = 0; i < LIMITS.max_sessions; i++) ids.push((await call('session::create', { title: `s${i}` })).session_id);
    const create = await failure(call('session::create', { title: 'one too many' }));
    expect(create.code).toBe('session/quota_exceeded');
    expect(create.message).toBe(
      'session/quota_exceeded: session::create: the store holds 5 sessions, as many as max_sessions (5) allows. Delete sessions to make room, or raise max_sessions in the session-manager configuration entry (configuration::set)',
    );
    expect((await failure(call('session::ensure', { session_id: 'console-new' }))).message).toContain('session::ensure');
    expect(await call('session::ensure', { session_id: ids[0] })).toMatchObject({ session_id: ids[0], created: false });
    const e = await call('session::append', { session_id: ids[0], message: user('x') });
    expect((await failure(call('session::fork', { session_id: ids[0], entry_id: e.entry_id }))).message).toContain('max_sessions');
    expect((await call('session::list', {})).sessions).toHaveLength(5);

    await call('session::delete', { session_id: ids[1] });
    expect((await call('session::create', { title: 'room again' })).session_id).toMatch(/^s_/);
    await clear();
  });
});

describe('across a restart', () => {
  it('the usage survives a restart of the engine and the worker, and records from before the quotas are counted', async () => {
    const { session_id } = await call('session::create', { title: 'durable' });
    for (let i = 0; i < 3; i++) await file(session_id);
    await call('session::append', { session_id, message: user('kept') });
    const other = (await call('session::create', { title: 'other' })).session_id;
    for (let i = 0; i < 3; i++) await file(other);
    const sessionRefusal = (await failure(file(session_id))).message;
    expect(sessionRefusal).toContain('max_session_bytes');
    const third = (await call('session::create', {})).session_id;
    await file(third);
    const totalRefusal = (await failure(file(third))).message;
    expect(totalRefusal).toContain('max_total_bytes');

    const restart = async () => {
      await c.close();
      await rig.worker.stop();
      await rig.engine.restart();
      rig.worker = startRole(rig.engine.busUrl, 'session');
      await rig.worker.ready;
      c = rig.client = await testClient(rig.engine.busUrl);
    };
    await restart();
    // the same writes are refused with the same counts
    expect((await failure(file(session_id))).message).toBe(sessionRefusal);
    expect((await failure(file(third))).message).toBe(totalRefusal);

    // a record written before the quotas has no count: the worker measures the session at start
    await c.close();
    await rig.worker.stop();
    c = rig.client = await testClient(rig.engine.busUrl);
    for (const id of [session_id, other, third]) {
      const record = await call('state::get', { scope: 'session-manager:sessions', key: id });
      expect(record.content_bytes).toBeGreaterThan(0);
      delete record.content_bytes;
      await call('state::set', { scope: 'session-manager:sessions', key: id, value: record });
    }
    await c.close();
    rig.worker = startRole(rig.engine.busUrl, 'session');
    await rig.worker.ready;
    c = rig.client = await testClient(rig.engine.busUrl);
    expect((await failure(file(session_id))).message).toBe(sessionRefusal);
    expect((await failure(file(third))).message).toBe(totalRefusal);

    // deleting still frees what was counted
    await call('session::delete', { session_id: other });
    await file(third);
    await clear();
  }, 120_000);
});
