import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { registerHandler } from '../shared/functions.ts';
import { persist, type SessionContext } from './context.ts';
import { attachmentRefs } from './entries.ts';
import { sessionError } from './errors.ts';
import { checkGrowth } from './quota.ts';
import { attachmentDataScope, attachmentsScope } from './store.ts';
import { type AttachmentMeta, idField } from './types.ts';

// spec: console-worker.md §2.2, §2.9 — attachments live beside the transcript: messages carry a
// `file` block (or an image's `attachment_id`), never the bytes. Uploads fire no event.

const sessionId = idField('session_id');
const attachmentId = idField('attachment_id');
const PutInput = z.object({
  session_id: sessionId,
  name: z
    .string({ error: (i) => (i.input === undefined ? 'name is required' : 'name must be a string') })
    .max(1024, { error: 'name is too long' }),
  mime: z.string({ error: 'mime must be a string' }).max(255, { error: 'mime is too long' }).nullish(),
  data: z.string({ error: (i) => (i.input === undefined ? 'data is required (base64)' : 'data must be a base64 string') }),
});
const GetInput = z.object({
  session_id: sessionId,
  attachment_id: attachmentId,
  include_data: z.boolean({ error: 'include_data must be a boolean' }).nullish(),
});
const ListInput = z.object({ session_id: sessionId });
const DeleteInput = z.object({ session_id: sessionId, attachment_id: attachmentId });

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded bytes of standard padded base64, or `session/invalid_request` / `attachment_too_large`. */
function decode(data: string, maxBytes: number): Buffer {
  const text = data.replace(/\s+/g, '');
  if (text.length % 4 !== 0 || !BASE64.test(text))
    throw sessionError('invalid_request', 'session::put-attachment: data is not standard (padded) base64');
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const size = (text.length / 4) * 3 - padding;
  if (size > maxBytes)
    throw sessionError('attachment_too_large', `attachment is ${size} bytes, over the limit of ${maxBytes} bytes (max_attachment_bytes)`);
  return Buffer.from(text, 'base64');
}

export function registerAttachments(ctx: SessionContext): void {
  const fn = <T>(id: string, description: string, schema: z.ZodType<T>, handler: (input: T) => unknown) =>
    registerHandler(ctx.client, 'session', id, { description, schema }, handler);

  fn('session::put-attachment', 'Store a file (base64) for a session; returns the file block a message embeds', PutInput, async (input) => {
    if (input.name.trim() === '') throw sessionError('invalid_request', 'session::put-attachment: name must not be blank');
    ctx.store.require(input.session_id);
    const bytes = decode(input.data, ctx.settings().max_attachment_bytes);
    const index = await ctx.store.attachments(input.session_id);
    const session = ctx.store.require(input.session_id);
    checkGrowth(ctx, 'session::put-attachment', session.session_id, ctx.store.usage(session.session_id), bytes.length);
    const meta: AttachmentMeta = {
      attachment_id: `a_${randomUUID()}`,
      session_id: session.session_id,
      name: input.name,
      mime: input.mime?.trim() || 'application/octet-stream',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      created_at: ctx.now(),
    };
    index.set(meta.attachment_id, meta);
    session.content_bytes = (session.content_bytes ?? 0) + meta.size;
    await persist(ctx, session.session_id, 'storing the attachment', [
      ctx.store.kv.set(attachmentDataScope(session.session_id), meta.attachment_id, bytes.toString('base64')),
      ctx.store.kv.set(attachmentsScope(session.session_id), meta.attachment_id, meta),
      ctx.store.saveSession(session),
    ]);
    return {
      attachment: meta,
      block: { type: 'file', attachment_id: meta.attachment_id, name: meta.name, mime: meta.mime, size: meta.size },
    };
  });

  fn(
    'session::get-attachment',
    'An attachment and its base64 data (include_data: false for metadata only); null when unknown',
    GetInput,
    async (input) => {
      if (!ctx.store.sessions.has(input.session_id)) return null;
      const meta = (await ctx.store.attachments(input.session_id)).get(input.attachment_id);
      if (!meta) return null;
      if (input.include_data === false) return { attachment: meta, data: null };
      const data = await ctx.store.kv.get<string>(attachmentDataScope(input.session_id), input.attachment_id);
      return { attachment: meta, data: data ?? null };
    },
  );

  fn('session::list-attachments', "A session's attachments, oldest first", ListInput, async (input) => {
    ctx.store.require(input.session_id);
    const index = await ctx.store.attachments(input.session_id);
    const attachments = [...index.values()].sort((a, b) => a.created_at - b.created_at || (a.attachment_id < b.attachment_id ? -1 : 1));
    return { attachments };
  });

  fn('session::delete-attachment', 'Remove an attachment no entry refers to (also drops it from the draft)', DeleteInput, async (input) => {
    const session = ctx.store.require(input.session_id);
    const entries = await ctx.store.entries(session.session_id);
    const index = await ctx.store.attachments(session.session_id);
    if (!index.has(input.attachment_id)) return { deleted: false };
    for (const entry of entries.values()) {
      if (attachmentRefs(entry).includes(input.attachment_id))
        throw sessionError('attachment_in_use', `attachment ${input.attachment_id} is referenced by entry ${entry.id}`);
    }
    const size = index.get(input.attachment_id)?.size ?? 0;
    index.delete(input.attachment_id);
    session.content_bytes = Math.max(0, (session.content_bytes ?? 0) - size);
    if (session.draft_attachments?.some((a) => a.attachment_id === input.attachment_id)) {
      session.draft_attachments = session.draft_attachments.filter((a) => a.attachment_id !== input.attachment_id);
      if (session.draft_attachments.length === 0) delete session.draft_attachments;
    }
    // the record goes with it: its byte count (and draft) changed
    const writes = [
      ctx.store.kv.delete(attachmentsScope(session.session_id), input.attachment_id),
      ctx.store.kv.delete(attachmentDataScope(session.session_id), input.attachment_id),
      ctx.store.saveSession(session),
    ];
    await persist(ctx, session.session_id, 'deleting the attachment', writes);
    return { deleted: true };
  });
}

/** Copy the attachments `ids` of one session to another under the same ids (fork). */
export async function copyAttachments(ctx: SessionContext, from: string, to: string, ids: Set<string>): Promise<Array<Promise<void>>> {
  if (ids.size === 0) return [];
  const source = await ctx.store.attachments(from);
  const target = await ctx.store.attachments(to);
  const writes: Array<Promise<void>> = [];
  for (const id of ids) {
    const meta = source.get(id);
    if (!meta) continue; // a reference to a missing original stays as it was
    const data = await ctx.store.kv.get<string>(attachmentDataScope(from), id);
    const copy = { ...meta, session_id: to };
    target.set(id, copy);
    writes.push(ctx.store.kv.set(attachmentsScope(to), id, copy));
    if (data !== undefined) writes.push(ctx.store.kv.set(attachmentDataScope(to), id, data));
  }
  return writes;
}
