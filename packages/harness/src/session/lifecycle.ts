import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { jsonEqual, metadataMatches } from '../shared/event-types.ts';
import { registerHandler } from '../shared/functions.ts';
import { persist, type SessionContext } from './context.ts';
import { sessionError } from './errors.ts';
import { SessionEvent, subjectOf } from './events.ts';
import { effectiveLimit, pageSessions } from './paging.ts';
import { checkGrowth, checkSessionCount } from './quota.ts';
import { publicMeta } from './store.ts';
import { idField, MetadataField, SessionStatus, type StoredSession } from './types.ts';

// spec: console-worker.md §2.2 — session lifecycle: create, ensure, get, list, set-meta,
// set-draft, set-status, delete.

const sessionId = idField('session_id');
const title = z.string({ error: 'title must be a string' }).max(1000, { error: 'title is longer than 1000 characters' });
const description = z.string({ error: 'description must be a string' }).max(10_000, { error: 'description is too long' });
const limit = z
  .number({ error: 'limit must be a number' })
  .int({ error: 'limit must be an integer' })
  .min(1, { error: 'limit must be at least 1' });

const CreateInput = z.object({ title: title.optional(), description: description.optional(), metadata: MetadataField.optional() });
const EnsureInput = CreateInput.extend({ session_id: sessionId });
const SessionIdInput = z.object({ session_id: sessionId });
const ListInput = z.object({
  limit: limit.optional(),
  cursor: z.string({ error: 'cursor must be a string' }).nullish(),
  status: z.union([SessionStatus, z.array(SessionStatus)], { error: 'status must be a status or an array of statuses' }).nullish(),
  metadata: MetadataField.nullish(),
  /** Only sessions with at least this many messages (custom entries not counted): 1 lists those with a transcript. */
  min_message_count: z
    .number({ error: 'min_message_count must be a number' })
    .int({ error: 'min_message_count must be an integer' })
    .min(0, { error: 'min_message_count must be at least 0' })
    .nullish(),
  order: z
    .enum(['created_asc', 'created_desc', 'updated_desc'], { error: 'order must be one of created_asc, created_desc, updated_desc' })
    .nullish(),
});
const SetMetaInput = z.object({
  session_id: sessionId,
  title: title.optional(),
  description: description.optional(),
  metadata: MetadataField.nullish(),
});
const SetDraftInput = z.object({
  session_id: sessionId,
  draft: z.string({ error: 'draft must be a string' }).max(1_000_000, { error: 'draft is too long' }).nullish(),
  attachment_ids: z.array(idField('attachment_ids[]'), { error: 'attachment_ids must be an array of ids' }).nullish(),
});
const SetStatusInput = z.object({
  session_id: sessionId,
  status: SessionStatus,
  reason: z.string({ error: 'reason must be a string' }).max(10_000, { error: 'reason is too long' }).nullish(),
});

export function newSession(ctx: SessionContext, id: string, fields: z.infer<typeof CreateInput> & { forked_from?: string }): StoredSession {
  const now = ctx.now();
  return {
    session_id: id,
    title: fields.title ?? '',
    description: fields.description ?? '',
    status: 'idle',
    ...(fields.metadata ? { metadata: fields.metadata } : {}),
    ...(fields.forked_from ? { forked_from: fields.forked_from } : {}),
    created_at: now,
    updated_at: now,
    message_count: 0,
    active_leaf: null,
    next_seq: 0,
    content_bytes: 0,
  };
}

export function emitCreated(ctx: SessionContext, session: StoredSession): void {
  ctx.events.emit(SessionEvent.Created, subjectOf(session), {
    session_id: session.session_id,
    title: session.title,
    description: session.description,
    status: session.status,
    ...(session.forked_from ? { forked_from: session.forked_from } : {}),
    created_at: session.created_at,
  });
}

/** Store a new session, if the quotas leave room for it. */
async function createSession(ctx: SessionContext, fn: string, session: StoredSession): Promise<void> {
  checkSessionCount(ctx, fn);
  checkGrowth(ctx, fn, session.session_id, 0, ctx.store.usageOf(session));
  ctx.store.sessions.set(session.session_id, session);
  await persist(ctx, session.session_id, 'storing the session', [ctx.store.saveSession(session)]);
  emitCreated(ctx, session);
}

/** Bytes a session's record grows by when `next` replaces it. */
function growth(ctx: SessionContext, session: StoredSession, next: StoredSession): number {
  return ctx.store.usageOf(next) - ctx.store.usageOf(session);
}

export function registerLifecycle(ctx: SessionContext): void {
  const fn = <T>(id: string, description: string, schema: z.ZodType<T>, handler: (input: T) => unknown) =>
    registerHandler(ctx.client, 'session', id, { description, schema }, handler);

  fn('session::create', 'Create a session at status idle; fires session::created', CreateInput, async (input) => {
    const session = newSession(ctx, `s_${randomUUID()}`, input);
    await createSession(ctx, 'session::create', session);
    return { session_id: session.session_id, meta: publicMeta(session) };
  });

  fn('session::ensure', 'Create the session with this id unless it exists (then a pure read)', EnsureInput, async (input) => {
    const existing = ctx.store.sessions.get(input.session_id);
    if (existing) return { session_id: existing.session_id, meta: publicMeta(existing), created: false };
    const session = newSession(ctx, input.session_id, input);
    await createSession(ctx, 'session::ensure', session);
    return { session_id: session.session_id, meta: publicMeta(session), created: true };
  });

  fn('session::get', 'The session meta, or null when unknown', SessionIdInput, (input) => {
    const session = ctx.store.sessions.get(input.session_id);
    return session ? { meta: publicMeta(session) } : null;
  });

  fn('session::list', 'Sessions filtered by status, metadata and message count, ordered and paged with cursors', ListInput, (input) => {
    const statuses = input.status == null ? undefined : Array.isArray(input.status) ? input.status : [input.status];
    const minMessages = input.min_message_count ?? 0;
    const matching = [...ctx.store.sessions.values()].filter(
      (s) =>
        (!statuses || statuses.includes(s.status)) &&
        s.message_count >= minMessages &&
        metadataMatches(input.metadata ?? undefined, s.metadata),
    );
    const { page, next_cursor } = pageSessions(
      matching,
      input.order ?? 'updated_desc',
      input.cursor ?? undefined,
      effectiveLimit(input.limit, ctx.settings()),
    );
    return { sessions: page.map(publicMeta), ...(next_cursor ? { next_cursor } : {}) };
  });

  fn(
    'session::set-meta',
    'Replace title, description and/or metadata (metadata wholesale); fires session::meta-updated',
    SetMetaInput,
    async (input) => {
      const session = ctx.store.require(input.session_id);
      const changes: Partial<StoredSession> = {};
      if (input.title !== undefined && input.title !== session.title) changes.title = input.title;
      if (input.description !== undefined && input.description !== session.description) changes.description = input.description;
      if (input.metadata !== undefined && !jsonEqual(input.metadata ?? undefined, session.metadata))
        changes.metadata = input.metadata ?? undefined;
      if (Object.keys(changes).length === 0) return { meta: publicMeta(session) };
      const next: StoredSession = { ...session, ...changes, updated_at: ctx.now() };
      if (next.metadata === undefined) delete next.metadata;
      checkGrowth(ctx, 'session::set-meta', session.session_id, ctx.store.usage(session.session_id), growth(ctx, session, next));
      Object.assign(session, changes, { updated_at: next.updated_at });
      if (session.metadata === undefined) delete session.metadata;
      await persist(ctx, session.session_id, 'storing the session meta', [ctx.store.saveSession(session)]);
      ctx.events.emit(SessionEvent.MetaUpdated, subjectOf(session), {
        session_id: session.session_id,
        title: session.title,
        description: session.description,
        ...(session.metadata ? { metadata: session.metadata } : {}),
        timestamp: session.updated_at,
      });
      return { meta: publicMeta(session) };
    },
  );

  fn(
    'session::set-draft',
    "Park or clear the composer's unsent text and attachments (no event, order unchanged)",
    SetDraftInput,
    async (input) => {
      ctx.store.require(input.session_id);
      const index = input.attachment_ids != null ? await ctx.store.attachments(input.session_id) : undefined;
      const session = ctx.store.require(input.session_id);
      // the draft is built apart and checked against the quotas before the session changes
      const next: StoredSession = { ...session };
      if (input.draft !== undefined) {
        if (input.draft === null || input.draft.trim() === '') delete next.draft;
        else next.draft = input.draft;
      }
      if (input.attachment_ids != null && index) {
        const metas = input.attachment_ids.map((id) => {
          const meta = index.get(id);
          if (!meta)
            throw sessionError(
              'invalid_request',
              `session::set-draft: attachment_ids: ${id} is not an attachment of ${session.session_id}`,
            );
          return meta;
        });
        if (metas.length) next.draft_attachments = metas;
        else delete next.draft_attachments;
      }
      checkGrowth(ctx, 'session::set-draft', session.session_id, ctx.store.usage(session.session_id), growth(ctx, session, next));
      if (next.draft === undefined) delete session.draft;
      else session.draft = next.draft;
      if (next.draft_attachments === undefined) delete session.draft_attachments;
      else session.draft_attachments = next.draft_attachments;
      await persist(ctx, session.session_id, 'storing the draft', [ctx.store.saveSession(session)]);
      return { draft: session.draft ?? null, attachments: session.draft_attachments ?? [] };
    },
  );

  fn(
    'session::set-status',
    'Set idle/working/done/error with an optional reason; fires session::status-changed',
    SetStatusInput,
    async (input) => {
      const session = ctx.store.require(input.session_id);
      const previous = session.status;
      // a reason is kept with working/done/error and cleared with idle
      const reason = input.status === 'idle' ? undefined : (input.reason ?? undefined);
      if (previous === input.status && session.status_reason === reason) return { status: previous, previous_status: previous };
      session.status = input.status;
      if (reason === undefined) delete session.status_reason;
      else session.status_reason = reason;
      session.updated_at = ctx.now();
      await persist(ctx, session.session_id, 'storing the status', [ctx.store.saveSession(session)]);
      ctx.events.emit(SessionEvent.StatusChanged, subjectOf(session), {
        session_id: session.session_id,
        status: session.status,
        previous_status: previous,
        ...(reason !== undefined ? { status_reason: reason } : {}),
        timestamp: session.updated_at,
      });
      return { status: session.status, previous_status: previous };
    },
  );

  fn(
    'session::delete',
    'Remove a session, its entries and attachments (forks survive); fires session::deleted',
    SessionIdInput,
    async (input) => {
      const session = ctx.store.sessions.get(input.session_id);
      if (!session) return { deleted: false };
      try {
        await ctx.store.delete(session.session_id);
      } catch (err) {
        await ctx.store.invalidate(session.session_id);
        throw sessionError('storage', `deleting ${session.session_id} failed: ${(err as Error).message}`);
      }
      ctx.events.emit(SessionEvent.Deleted, subjectOf(session), { session_id: session.session_id, timestamp: ctx.now() });
      return { deleted: true };
    },
  );
}
