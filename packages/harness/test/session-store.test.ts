/**
 * The session store (`eng-chat session`) against a real engine: every function of
 * console-worker.md §2.2 with its reference shapes, idempotent appends, revisions, forks and the
 * active leaf, drafts, cursor paging, and bad input answered with errors naming the field.
 */
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/harness.ts';
import { assistant, failure, type SessionRig, startSessionRig, text, user } from './session-helpers.ts';

let rig: SessionRig;
let c: EngClient;
const call = <T = any>(fn: string, payload: unknown) => c.call<T>(fn, payload);

beforeAll(async () => {
  rig = await startSessionRig();
  c = rig.client;
});
afterAll(() => rig?.stop());

describe('session lifecycle', () => {
  it('creates, ensures, reads and lists sessions with the reference meta', async () => {
    const created = await call('session::create', { title: 'Weather', description: 'd', metadata: { owner: 'u1' } });
    expect(created.session_id).toMatch(/^s_/);
    expect(created.meta).toEqual({
      session_id: created.session_id,
      title: 'Weather',
      description: 'd',
      status: 'idle',
      metadata: { owner: 'u1' },
      created_at: expect.any(Number),
      updated_at: created.meta.created_at,
      message_count: 0,
    });
    expect(await call('session::get', { session_id: created.session_id })).toEqual({ meta: created.meta });
    expect(await call('session::get', { session_id: 'nope' })).toBeNull();

    const ensured = await call('session::ensure', { session_id: 'console-1', title: 'first' });
    expect(ensured).toMatchObject({ session_id: 'console-1', created: true, meta: { title: 'first', status: 'idle' } });
    // a second ensure is a pure read: the new title is not applied
    const again = await call('session::ensure', { session_id: 'console-1', title: 'second' });
    expect(again).toEqual({ session_id: 'console-1', created: false, meta: ensured.meta });
  });

  it('set-meta replaces metadata wholesale; set-status keeps a reason except for idle; delete removes', async () => {
    const { session_id } = await call('session::create', { title: 't', metadata: { a: 1, b: 2 } });
    const { meta } = await call('session::set-meta', { session_id, title: 'renamed', metadata: { c: 3 } });
    expect(meta).toMatchObject({ title: 'renamed', metadata: { c: 3 } });
    expect(meta.metadata).not.toHaveProperty('a');

    expect(await call('session::set-status', { session_id, status: 'working', reason: 'turn t1' })).toEqual({
      status: 'working',
      previous_status: 'idle',
    });
    expect((await call('session::get', { session_id })).meta).toMatchObject({ status: 'working', status_reason: 'turn t1' });
    expect(await call('session::set-status', { session_id, status: 'idle', reason: 'ignored' })).toEqual({
      status: 'idle',
      previous_status: 'working',
    });
    expect((await call('session::get', { session_id })).meta).not.toHaveProperty('status_reason');

    expect(await call('session::delete', { session_id })).toEqual({ deleted: true });
    expect(await call('session::get', { session_id })).toBeNull();
    expect(await call('session::delete', { session_id })).toEqual({ deleted: false });
    expect((await failure(call('session::append', { session_id, message: user('x') }))).code).toBe('session/not_found');
  });

  it('keeps a draft with attachments without moving the session in updated_desc order', async () => {
    const { session_id, meta } = await call('session::create', { title: 'draft' });
    const { attachment } = await call('session::put-attachment', {
      session_id,
      name: 'a.txt',
      mime: 'text/plain',
      data: Buffer.from('hello').toString('base64'),
    });
    const saved = await call('session::set-draft', { session_id, draft: 'half a thought', attachment_ids: [attachment.attachment_id] });
    expect(saved).toEqual({ draft: 'half a thought', attachments: [attachment] });
    const after = (await call('session::get', { session_id })).meta;
    expect(after).toMatchObject({ draft: 'half a thought', draft_attachments: [attachment], updated_at: meta.updated_at });
    // whitespace clears the text; an unknown attachment is refused naming it
    expect(await call('session::set-draft', { session_id, draft: '   ' })).toEqual({ draft: null, attachments: [attachment] });
    const bad = await failure(call('session::set-draft', { session_id, attachment_ids: ['a_missing'] }));
    expect(bad.code).toBe('session/invalid_request');
    expect(bad.message).toContain('a_missing');
    // deleting the attachment drops it from the draft
    expect(await call('session::delete-attachment', { session_id, attachment_id: attachment.attachment_id })).toEqual({ deleted: true });
    expect((await call('session::get', { session_id })).meta).not.toHaveProperty('draft_attachments');
  });

  it('lists in the three orders with filters and cursor pages that cover every session once', async () => {
    const tag = `list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const { session_id } = await call('session::create', { title: `s${i}`, metadata: { tag, odd: i % 2 === 1 } });
      ids.push(session_id);
      await new Promise((r) => setTimeout(r, 3));
    }
    // touching the first one moves it to the top of updated_desc
    await call('session::set-status', { session_id: ids[0], status: 'done' });

    const collect = async (order: string, extra: object = {}) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await call('session::list', { limit: 3, order, metadata: { tag }, ...extra, ...(cursor ? { cursor } : {}) });
        expect(page.sessions.length).toBeLessThanOrEqual(3);
        seen.push(...page.sessions.map((s: { session_id: string }) => s.session_id));
        if (!page.next_cursor) return seen;
        cursor = page.next_cursor;
      }
      throw new Error('paging did not end');
    };
    expect(await collect('created_asc')).toEqual(ids);
    expect(await collect('created_desc')).toEqual([...ids].reverse());
    expect(await collect('updated_desc')).toEqual([ids[0], ...ids.slice(1).reverse()]);
    expect(await collect('created_asc', { metadata: { tag, odd: true } })).toEqual([ids[1], ids[3], ids[5]]);
    expect(await collect('created_asc', { status: 'done' })).toEqual([ids[0]]);

    const first = await call('session::list', { limit: 2, order: 'created_asc', metadata: { tag } });
    const wrong = await failure(call('session::list', { order: 'created_desc', cursor: first.next_cursor }));
    expect(wrong.code).toBe('session/invalid_cursor');
    expect((await failure(call('session::list', { cursor: 'garbage' }))).code).toBe('session/invalid_cursor');
  });

  it('min_message_count lists only the sessions with a transcript (custom entries do not count)', async () => {
    const tag = `count-${Date.now()}`;
    const empty = (await call('session::create', { metadata: { tag } })).session_id;
    const customOnly = (await call('session::create', { metadata: { tag } })).session_id;
    await call('session::append', { session_id: customOnly, custom: { custom_type: 'note', data: { x: 1 } } });
    const talked = (await call('session::create', { metadata: { tag } })).session_id;
    await call('session::append', { session_id: talked, message: user('hello') });
    await call('session::append', { session_id: talked, message: assistant('hi') });
    const ids = async (extra: object) =>
      (await call('session::list', { metadata: { tag }, order: 'created_asc', ...extra })).sessions.map((s: any) => s.session_id);
    expect(await ids({})).toEqual([empty, customOnly, talked]);
    expect(await ids({ min_message_count: 0 })).toEqual([empty, customOnly, talked]);
    expect(await ids({ min_message_count: 1 })).toEqual([talked]);
    expect(await ids({ min_message_count: 3 })).toEqual([]);
    expect((await failure(call('session::list', { min_message_count: -1 }))).message).toContain('min_message_count must be at least 0');
    expect((await failure(call('session::list', { min_message_count: 'x' }))).message).toContain('min_message_count must be a number');
  });
});

describe('transcript', () => {
  it('appends idempotently on entry_id and chains parents from the active leaf', async () => {
    const { session_id } = await call('session::create', {});
    const first = await call('session::append', { session_id, message: user('hi'), entry_id: 'e_idem_k1', origin: { turn_id: 't1' } });
    expect(first).toEqual({ entry_id: 'e_idem_k1', parent_id: null, timestamp: expect.any(Number) });
    // a replay returns the original entry and adds nothing
    expect(await call('session::append', { session_id, message: user('hi again'), entry_id: 'e_idem_k1' })).toEqual(first);
    const second = await call('session::append', { session_id, message: assistant('hello') });
    expect(second.parent_id).toBe('e_idem_k1');
    const custom = await call('session::append', { session_id, custom: { custom_type: 'compaction', data: { summary: 's' } } });
    expect(custom.parent_id).toBe(second.entry_id);

    const { messages } = await call('session::messages', { session_id });
    expect(messages.map((m: any) => m.entry_id)).toEqual(['e_idem_k1', second.entry_id]);
    expect(messages[0]).toMatchObject({
      entry_id: 'e_idem_k1',
      parent_id: null,
      revision: 0,
      origin: { turn_id: 't1' },
      message: user('hi'),
    });
    const withCustom = await call('session::messages', { session_id, include_custom: true });
    expect(withCustom.messages[2]).toMatchObject({
      entry_id: custom.entry_id,
      custom: { custom_type: 'compaction', data: { summary: 's' } },
    });
    // custom entries are not messages: they do not count and never match a roles filter
    expect((await call('session::get', { session_id })).meta.message_count).toBe(2);
    const users = await call('session::messages', { session_id, roles: ['user'], include_custom: true });
    expect(users.messages.map((m: any) => m.entry_id)).toEqual(['e_idem_k1']);

    const many = await call('session::append-many', { session_id, messages: [user('a'), assistant('b')] });
    expect(many.entry_ids).toHaveLength(2);
    expect(many.last_entry_id).toBe(many.entry_ids[1]);
    const got = await call('session::get-message', { session_id, entry_id: many.entry_ids[0] });
    expect(got.entry).toMatchObject({
      kind: 'message',
      id: many.entry_ids[0],
      parent_id: custom.entry_id,
      revision: 0,
      message: user('a'),
    });
    expect(got.entry).not.toHaveProperty('seq');
    expect(await call('session::get-message', { session_id, entry_id: 'e_nope' })).toBeNull();
    expect((await failure(call('session::append-many', { session_id, messages: [] }))).code).toBe('session/empty_batch');
    expect((await failure(call('session::append', { session_id, message: user('x'), parent_id: 'e_nope' }))).code).toBe(
      'session/parent_not_found',
    );
  });

  it('update-message raises the revision by one per update and honours expected_revision', async () => {
    const { session_id } = await call('session::create', {});
    const { entry_id } = await call('session::append', { session_id, message: { role: 'assistant', content: [] } });
    const revisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('session::update-message', { session_id, entry_id, content: [text('x'.repeat(i + 1))] })),
    );
    expect(revisions.map((r) => r.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await call('session::update-message', { session_id, entry_id, content: [text('stale')], expected_revision: 3 })).toEqual({
      updated: false,
      revision: 20,
    });
    const final = await call('session::update-message', {
      session_id,
      entry_id,
      content: [text('done')],
      expected_revision: 20,
      stop_reason: 'end',
      usage: { input: 3, output: 5 },
      model: 'gpt',
      provider: 'openai',
    });
    expect(final).toEqual({ updated: true, revision: 21 });
    const { entry } = await call('session::get-message', { session_id, entry_id });
    expect(entry).toMatchObject({
      revision: 21,
      message: { role: 'assistant', content: [text('done')], stop_reason: 'end', usage: { input: 3, output: 5 } },
    });

    const u = await call('session::append', { session_id, message: user('q') });
    expect((await failure(call('session::update-message', { session_id, entry_id: u.entry_id, content: [], details: {} }))).code).toBe(
      'session/details_not_supported',
    );
    const cust = await call('session::append', { session_id, custom: { custom_type: 'x' } });
    expect((await failure(call('session::update-message', { session_id, entry_id: cust.entry_id, content: [] }))).code).toBe(
      'session/invalid_entry_kind',
    );
    expect((await failure(call('session::update-message', { session_id, entry_id: 'e_nope', content: [] }))).code).toBe(
      'session/entry_not_found',
    );
  });

  it('pages messages with cursors and reads a branch with from_entry_id', async () => {
    const { session_id } = await call('session::create', {});
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await call('session::append', { session_id, message: user(`m${i}`) })).entry_id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('session::messages', { session_id, limit: 5, ...(cursor ? { cursor } : {}) });
      seen.push(...page.messages.map((m: any) => m.entry_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const head = await call('session::messages', { session_id, from_entry_id: ids[3] });
    expect(head.messages.map((m: any) => m.entry_id)).toEqual(ids.slice(0, 4));
    expect((await failure(call('session::messages', { session_id, cursor: 'bad' }))).code).toBe('session/invalid_cursor');
  });

  it('branches with set-active-leaf and forks into an independent session', async () => {
    const { session_id } = await call('session::create', { title: 'src', metadata: { owner: 'u2' } });
    const a = await call('session::append', { session_id, message: user('a') });
    const b = await call('session::append', { session_id, message: assistant('b') });
    await call('session::update-message', { session_id, entry_id: b.entry_id, content: [text('b2')] });
    await call('session::append', { session_id, message: user('c') });

    expect(await call('session::set-active-leaf', { session_id, entry_id: a.entry_id })).toEqual({ active_leaf: a.entry_id });
    const alt = await call('session::append', { session_id, message: assistant('b-alt') });
    expect(alt.parent_id).toBe(a.entry_id);
    const active = await call('session::messages', { session_id });
    expect(active.messages.map((m: any) => m.message.content[0].text)).toEqual(['a', 'b-alt']);
    // the old branch stays readable
    const old = await call('session::messages', { session_id, from_entry_id: b.entry_id });
    expect(old.messages.map((m: any) => m.message.content[0].text)).toEqual(['a', 'b2']);

    const fork = await call('session::fork', { session_id, entry_id: b.entry_id });
    expect(fork.meta).toMatchObject({ title: 'src', forked_from: session_id, metadata: { owner: 'u2' }, message_count: 2 });
    const copied = await call('session::messages', { session_id: fork.session_id });
    expect(copied.messages.map((m: any) => m.message.content[0].text)).toEqual(['a', 'b2']);
    expect(copied.messages.every((m: any) => m.revision === 0 && ![a.entry_id, b.entry_id].includes(m.entry_id))).toBe(true);
    // independent afterwards: deleting the source leaves the fork intact
    await call('session::delete', { session_id });
    expect((await call('session::messages', { session_id: fork.session_id })).messages).toHaveLength(2);
    expect((await failure(call('session::fork', { session_id: fork.session_id, entry_id: 'e_nope' }))).code).toBe(
      'session/entry_not_found',
    );
  });
});

describe('attachments', () => {
  it('stores bytes out of the transcript, links images, refuses deleting referenced ones', async () => {
    const { session_id } = await call('session::create', {});
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const put = await call('session::put-attachment', { session_id, name: 'pic.png', mime: 'image/png', data: png.toString('base64') });
    expect(put.attachment).toEqual({
      attachment_id: expect.stringMatching(/^a_/),
      session_id,
      name: 'pic.png',
      mime: 'image/png',
      size: png.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: expect.any(Number),
    });
    expect(put.block).toEqual({
      type: 'file',
      attachment_id: put.attachment.attachment_id,
      name: 'pic.png',
      mime: 'image/png',
      size: png.length,
    });
    const id = put.attachment.attachment_id;
    expect(await call('session::get-attachment', { session_id, attachment_id: id })).toEqual({
      attachment: put.attachment,
      data: png.toString('base64'),
    });
    expect(await call('session::get-attachment', { session_id, attachment_id: id, include_data: false })).toEqual({
      attachment: put.attachment,
      data: null,
    });
    expect(await call('session::get-attachment', { session_id, attachment_id: 'a_nope' })).toBeNull();

    const msg = {
      role: 'user',
      content: [text('look'), { type: 'image', mime: 'image/png', data: png.toString('base64'), attachment_id: id }],
    };
    const { entry_id } = await call('session::append', { session_id, message: msg });
    const lean = await call('session::messages', { session_id, include_image_data: false });
    expect(lean.messages[0].message.content[1]).toEqual({ type: 'image', mime: 'image/png', data: '', attachment_id: id });
    expect((await call('session::get-message', { session_id, entry_id })).entry.message.content[1].data).toBe(png.toString('base64'));
    expect((await failure(call('session::delete-attachment', { session_id, attachment_id: id }))).code).toBe('session/attachment_in_use');

    const other = await call('session::put-attachment', { session_id, name: 'x.bin', mime: '', data: 'AAEC' });
    expect(other.attachment.mime).toBe('application/octet-stream');
    expect((await call('session::list-attachments', { session_id })).attachments.map((a: any) => a.attachment_id)).toEqual([
      id,
      other.attachment.attachment_id,
    ]);
    expect(await call('session::delete-attachment', { session_id, attachment_id: other.attachment.attachment_id })).toEqual({
      deleted: true,
    });
    expect(await call('session::delete-attachment', { session_id, attachment_id: other.attachment.attachment_id })).toEqual({
      deleted: false,
    });
  });

  it('refuses bad base64, blank names and attachments over the size limit with clear errors', async () => {
    const { session_id } = await call('session::create', {});
    const bad = await failure(call('session::put-attachment', { session_id, name: 'x', mime: 'text/plain', data: 'not base64!' }));
    expect(bad).toMatchObject({ code: 'session/invalid_request', message: expect.stringContaining('base64') });
    expect((await failure(call('session::put-attachment', { session_id, name: '  ', data: 'AAAA' }))).message).toContain('name');
    // the limit lives in the session-manager configuration entry (8 MiB) and reloads live
    const settings = (await call('configuration::get', { id: 'session-manager' })).value;
    expect(settings).toEqual({
      default_list_limit: 50,
      max_list_limit: 500,
      max_attachment_bytes: 8 * 1024 * 1024,
      max_message_bytes: 8 * 1024 * 1024,
      max_session_bytes: 64 * 1024 * 1024,
      max_total_bytes: 1024 * 1024 * 1024,
      max_sessions: 2000,
    });
    await call('configuration::set', { id: 'session-manager', value: { ...settings, max_attachment_bytes: 1024 } });
    const big = Buffer.alloc(1025).toString('base64');
    // a probe session shows when the worker has reloaded (until then the probe's upload succeeds)
    const probe = (await call('session::create', {})).session_id;
    await waitFor(
      () =>
        failure(call('session::put-attachment', { session_id: probe, name: 'p', data: big })).then(
          (e) => e.code === 'session/attachment_too_large',
        ),
      5000,
    );
    const tooLarge = await failure(call('session::put-attachment', { session_id, name: 'big.bin', data: big }));
    expect(tooLarge.message).toBe(
      'session/attachment_too_large: attachment is 1025 bytes, over the limit of 1024 bytes (max_attachment_bytes)',
    );
    expect((await call('session::list-attachments', { session_id })).attachments).toEqual([]);
    expect(
      (await call('session::put-attachment', { session_id, name: 'ok.bin', data: Buffer.alloc(1024).toString('base64') })).attachment.size,
    ).toBe(1024);
    await call('configuration::set', { id: 'session-manager', value: settings });
  });
});

describe('bad input', () => {
  it('answers every malformed call with an error naming the field, and keeps serving', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['session::get', {}, /session_id is required/],
      ['session::get', null, /session_id is required/],
      ['session::create', { title: 5 }, /title must be a string/],
      ['session::create', { metadata: [1] }, /metadata must be an object/],
      ['session::list', { limit: 0 }, /limit must be at least 1/],
      ['session::list', { order: 'sideways' }, /order must be one of/],
      ['session::set-status', { session_id: 's', status: 'sleeping' }, /status must be one of/],
      ['session::append', { session_id: 's' }, /exactly one of message or custom|not_found/],
      ['session::append', { session_id: 'x', message: { role: 'robot', content: [] } }, /role must be one of/],
      [
        'session::append',
        { session_id: 'x', message: { role: 'user', content: [{ type: 'video' }] } },
        /content\.0\.type: type must be one of/,
      ],
      ['session::update-message', { session_id: 'x', entry_id: 'e' }, /content must be an array/],
      ['session::messages', { session_id: 'x', roles: ['boss'] }, /roles\.0: role must be one of/],
      ['session::put-attachment', { session_id: 'x', name: 'n' }, /data is required/],
    ];
    for (const [fn, payload, pattern] of cases) {
      const err = await failure(call(fn, payload));
      expect(err.message, `${fn} ${JSON.stringify(payload)}`).toMatch(pattern);
      expect(err.code).toMatch(/^session\//);
    }
    // still up
    expect((await call('session::create', {})).session_id).toMatch(/^s_/);
  });
});
