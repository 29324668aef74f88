/**
 * The session store keeps everything in the engine's state store: with the file_based (SQLite)
 * adapter, sessions, transcripts with their revisions and branches, drafts and attachments
 * survive a restart of both the engine and the worker.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startRole, testClient } from '../src/shared/test-support.ts';
import { assistant, type SessionRig, startSessionRig, text, user } from './session-helpers.ts';

let rig: SessionRig | undefined;
afterAll(() => rig?.stop());

it('keeps sessions, transcripts, branches, drafts and attachments across an engine and worker restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eng-session-durable-'));
  rig = await startSessionRig({ stateFile: join(dir, 'state.db'), dataDir: join(dir, 'data') });
  let c = rig.client;
  const { session_id } = await c.call<any>('session::create', { title: 'keep me', metadata: { k: 1 } });
  const a = await c.call<any>('session::append', { session_id, message: user('a') });
  const b = await c.call<any>('session::append', { session_id, message: assistant('') });
  for (let i = 1; i <= 5; i++) await c.call('session::update-message', { session_id, entry_id: b.entry_id, content: [text(`t${i}`)] });
  await c.call('session::set-active-leaf', { session_id, entry_id: a.entry_id });
  const alt = await c.call<any>('session::append', { session_id, message: assistant('alt') });
  const put = await c.call<any>('session::put-attachment', {
    session_id,
    name: 'n.txt',
    mime: 'text/plain',
    data: Buffer.from('bytes').toString('base64'),
  });
  await c.call('session::set-draft', { session_id, draft: 'unsent', attachment_ids: [put.attachment.attachment_id] });
  await c.call('session::set-status', { session_id, status: 'done', reason: 'finished' });
  const before = await c.call<any>('session::get', { session_id });

  await c.close();
  await rig.worker.stop();
  await rig.engine.restart();
  const worker = startRole(rig.engine.busUrl, 'session');
  rig.worker = worker;
  await worker.ready;
  expect(worker.output()).toMatch(/1 stored session\b/);
  c = rig.client = await testClient(rig.engine.busUrl);

  expect(await c.call('session::get', { session_id })).toEqual(before);
  const { messages } = await c.call<any>('session::messages', { session_id });
  expect(messages.map((m: any) => m.entry_id)).toEqual([a.entry_id, alt.entry_id]);
  const { entry } = await c.call<any>('session::get-message', { session_id, entry_id: b.entry_id });
  expect(entry).toMatchObject({ revision: 5, message: { content: [text('t5')] } });
  // revisions keep rising from where they were
  expect(await c.call('session::update-message', { session_id, entry_id: b.entry_id, content: [text('t6')] })).toEqual({
    updated: true,
    revision: 6,
  });
  expect(await c.call('session::get-attachment', { session_id, attachment_id: put.attachment.attachment_id })).toEqual({
    attachment: put.attachment,
    data: Buffer.from('bytes').toString('base64'),
  });
  // appends continue the active branch
  const next = await c.call<any>('session::append', { session_id, message: user('after restart') });
  expect(next.parent_id).toBe(alt.entry_id);
});
