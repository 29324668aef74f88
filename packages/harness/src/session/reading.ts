import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { registerHandler } from '../shared/functions.ts';
import { copyAttachments } from './attachments.ts';
import { persist, type SessionContext } from './context.ts';
import { attachmentRefs, messageItem, pathTo, publicEntry, requireEntry } from './entries.ts';
import { sessionError } from './errors.ts';
import { emitCreated, newSession } from './lifecycle.ts';
import { decodeCursor, effectiveLimit, encodeCursor } from './paging.ts';
import { checkGrowth, checkSessionCount } from './quota.ts';
import { publicMeta } from './store.ts';
import { idField, Role, type StoredEntry } from './types.ts';

// spec: console-worker.md §2.2 — reading the transcript (messages, get-message) and branching
// (fork, set-active-leaf).

const sessionId = idField('session_id');
const includeImageData = z.boolean({ error: 'include_image_data must be a boolean' }).nullish();
const MessagesInput = z.object({
  session_id: sessionId,
  limit: z
    .number({ error: 'limit must be a number' })
    .int({ error: 'limit must be an integer' })
    .min(1, { error: 'limit must be at least 1' })
    .nullish(),
  cursor: z.string({ error: 'cursor must be a string' }).nullish(),
  roles: z.array(Role, { error: 'roles must be an array of roles' }).nullish(),
  from_entry_id: idField('from_entry_id').nullish(),
  include_custom: z.boolean({ error: 'include_custom must be a boolean' }).nullish(),
  include_image_data: includeImageData,
});
const GetMessageInput = z.object({ session_id: sessionId, entry_id: idField('entry_id'), include_image_data: includeImageData });
const ForkInput = z.object({
  session_id: sessionId,
  entry_id: idField('entry_id'),
  title: z.string({ error: 'title must be a string' }).max(1000, { error: 'title is too long' }).nullish(),
});
// entry_id null: the empty path, so the next append starts a new root (editing the first message)
const LeafInput = z.object({ session_id: sessionId, entry_id: idField('entry_id').nullable() });

export function registerTranscriptReads(ctx: SessionContext): void {
  const fn = <T>(id: string, description: string, schema: z.ZodType<T>, handler: (input: T) => unknown) =>
    registerHandler(ctx.client, 'session', id, { description, schema }, handler);

  fn(
    'session::messages',
    'The active path (or root → from_entry_id), oldest first, filtered by roles, paged with cursors (default 50, cap 500)',
    MessagesInput,
    async (input) => {
      ctx.store.require(input.session_id);
      const entries = await ctx.store.entries(input.session_id);
      const session = ctx.store.require(input.session_id);
      const end = input.from_entry_id ? requireEntry(entries, session.session_id, input.from_entry_id).id : session.active_leaf;
      const roles = input.roles ?? undefined;
      const items = pathTo(entries, end).filter((e) =>
        e.kind === 'message' ? !roles || roles.includes(e.message.role) : input.include_custom === true && !roles,
      );
      let start = 0;
      if (input.cursor) {
        const after = decodeCursor(input.cursor, 'messages').after;
        const index = items.findIndex((e) => e.id === after);
        if (index < 0) throw sessionError('invalid_cursor', `the cursor's entry ${String(after)} is no longer on the requested path`);
        start = index + 1;
      }
      const limit = effectiveLimit(input.limit ?? undefined, ctx.settings());
      const page = items.slice(start, start + limit);
      const last = page[page.length - 1];
      return {
        messages: page.map((e) => messageItem(e, input.include_image_data !== false)),
        ...(last && start + limit < items.length ? { next_cursor: encodeCursor({ k: 'messages', after: last.id }) } : {}),
      };
    },
  );

  fn(
    'session::get-message',
    'One entry with its envelope (revision, parent_id, origin); null when unknown',
    GetMessageInput,
    async (input) => {
      if (!ctx.store.sessions.has(input.session_id)) return null;
      const entry = (await ctx.store.entries(input.session_id)).get(input.entry_id);
      return entry ? { entry: publicEntry(entry, input.include_image_data !== false) } : null;
    },
  );

  fn(
    'session::set-active-leaf',
    'Switch branch: the active path now ends at entry_id (null: before the first entry); later appends chain from it (no event). Refused while the session is working',
    LeafInput,
    async (input) => {
      ctx.store.require(input.session_id);
      const entries = await ctx.store.entries(input.session_id);
      const session = ctx.store.require(input.session_id);
      const leaf = input.entry_id === null ? null : requireEntry(entries, session.session_id, input.entry_id).id;
      if (session.active_leaf === leaf) return { active_leaf: leaf };
      // a running turn appends under the leaf: moving it would graft the turn's next entries onto another branch
      if (session.status === 'working')
        throw sessionError('turn_active', `session ${session.session_id} is working: stop its turn before switching branch`);
      session.active_leaf = leaf;
      await persist(ctx, session.session_id, 'storing the active leaf', [ctx.store.saveSession(session)]);
      return { active_leaf: leaf };
    },
  );

  fn(
    'session::fork',
    'Copy the path root → entry_id into a new independent session (fresh entry ids, revisions 0); fires session::created',
    ForkInput,
    async (input) => {
      ctx.store.require(input.session_id);
      const entries = await ctx.store.entries(input.session_id);
      const attachments = await ctx.store.attachments(input.session_id);
      const source = ctx.store.require(input.session_id);
      requireEntry(entries, source.session_id, input.entry_id);
      const path = pathTo(entries, input.entry_id);
      const fork = newSession(ctx, `s_${randomUUID()}`, {
        title: input.title ?? source.title,
        description: source.description,
        metadata: source.metadata ? structuredClone(source.metadata) : undefined,
        forked_from: source.session_id,
      });
      const ids = new Map<string, string>();
      const copies = new Map<string, StoredEntry>();
      const referenced = new Set<string>();
      for (const entry of path) {
        const id = `e_${randomUUID()}`;
        ids.set(entry.id, id);
        const copy = structuredClone({
          ...entry,
          id,
          parent_id: entry.parent_id ? (ids.get(entry.parent_id) ?? null) : null,
          revision: 0,
          seq: fork.next_seq++,
        });
        copies.set(id, copy);
        if (copy.kind === 'message') fork.message_count++;
        for (const ref of attachmentRefs(copy)) referenced.add(ref);
      }
      fork.active_leaf = ids.get(input.entry_id) ?? null;
      // the copy counts like any session: its entries, the attachments they refer to, its record
      let bytes = 0;
      for (const copy of copies.values()) bytes += ctx.store.entryBytes(copy);
      for (const ref of referenced) bytes += attachments.get(ref)?.size ?? 0;
      fork.content_bytes = bytes;
      checkSessionCount(ctx, 'session::fork');
      checkGrowth(ctx, 'session::fork', fork.session_id, 0, ctx.store.usageOf(fork));
      ctx.store.sessions.set(fork.session_id, fork);
      ctx.store.cacheTranscript(fork.session_id, copies);
      const writes = [...copies.values()].map((entry) => ctx.store.saveEntry(fork.session_id, entry));
      writes.push(...(await copyAttachments(ctx, source.session_id, fork.session_id, referenced)));
      writes.push(ctx.store.saveSession(fork));
      await persist(ctx, fork.session_id, 'storing the fork', writes);
      emitCreated(ctx, fork);
      return { session_id: fork.session_id, meta: publicMeta(fork) };
    },
  );
}
