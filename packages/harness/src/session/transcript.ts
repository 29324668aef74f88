import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { registerHandler } from '../shared/functions.ts';
import { persist, type SessionContext } from './context.ts';
import { requireEntry, roleOf } from './entries.ts';
import { sessionError } from './errors.ts';
import { SessionEvent, subjectOf } from './events.ts';
import { checkGrowth, checkMessageSize } from './quota.ts';
import { jsonBytes } from './store.ts';
import {
  AgentMessage,
  AssistantPatch,
  ContentBlock,
  CustomPayload,
  idField,
  type Origin,
  OriginField,
  type StoredEntry,
  type StoredSession,
} from './types.ts';

// spec: console-worker.md §2.2 — writing the transcript: append (idempotent on entry_id),
// append-many, update-message (revisions strictly rising per entry).

const sessionId = idField('session_id');
const AppendInput = z.object({
  session_id: sessionId,
  message: AgentMessage.optional(),
  custom: CustomPayload.optional(),
  parent_id: idField('parent_id').nullish(),
  entry_id: idField('entry_id').nullish(),
  origin: OriginField,
});
const AppendManyInput = z.object({
  session_id: sessionId,
  messages: z.array(AgentMessage, { error: 'messages must be an array of messages' }),
  parent_id: idField('parent_id').nullish(),
  origin: OriginField,
});
const UpdateInput = z.object({
  session_id: sessionId,
  entry_id: idField('entry_id'),
  content: z.array(ContentBlock, { error: 'content must be an array of content blocks' }),
  details: z.unknown().optional(),
  expected_revision: z.number({ error: 'expected_revision must be a number' }).int().min(0).nullish(),
  origin: OriginField,
  ...AssistantPatch,
});

type NewEntry = { message: AgentMessage } | { custom: { custom_type: string; data?: unknown } };

/** A new entry under `parentId` with sequence number `seq` (nothing changes yet). */
function makeEntry(ctx: SessionContext, parentId: string | null, id: string, seq: number, body: NewEntry, origin?: Origin): StoredEntry {
  const now = ctx.now();
  const base = { id, parent_id: parentId, timestamp: now, revision: 0, seq, ...(origin ? { origin } : {}) };
  return 'message' in body
    ? { ...base, kind: 'message', message: { ...body.message, timestamp: body.message.timestamp ?? now } }
    : { ...base, kind: 'custom', custom_type: body.custom.custom_type, data: body.custom.data ?? null };
}

/**
 * Refuse entries the quotas do not leave room for (each against max_message_bytes, together
 * against the session's and the store's bytes), before anything changes.
 */
function checkEntries(ctx: SessionContext, fn: string, session: StoredSession, added: StoredEntry[]): void {
  let bytes = 0;
  for (const entry of added) {
    const size = ctx.store.entryBytes(entry);
    checkMessageSize(ctx, fn, size);
    bytes += size;
  }
  checkGrowth(ctx, fn, session.session_id, ctx.store.usage(session.session_id), bytes);
}

/** Put a checked entry in memory and move the leaf to it (the caller persists). */
function addEntry(ctx: SessionContext, session: StoredSession, entries: Map<string, StoredEntry>, entry: StoredEntry): void {
  entries.set(entry.id, entry);
  session.next_seq = Math.max(session.next_seq, entry.seq + 1);
  session.active_leaf = entry.id;
  if (entry.kind === 'message') session.message_count++;
  session.content_bytes = (session.content_bytes ?? 0) + ctx.store.entryBytes(entry);
  session.updated_at = entry.timestamp;
}

function emitAdded(ctx: SessionContext, session: StoredSession, entry: StoredEntry): void {
  if (ctx.events.count(SessionEvent.MessageAdded) === 0) return;
  ctx.events.emit(SessionEvent.MessageAdded, subjectOf(session, roleOf(entry)), {
    session_id: session.session_id,
    entry_id: entry.id,
    parent_id: entry.parent_id,
    ...(entry.kind === 'message' ? { message: entry.message } : { custom: { custom_type: entry.custom_type, data: entry.data } }),
    ...(entry.origin ? { origin: entry.origin } : {}),
    timestamp: entry.timestamp,
    revision: entry.revision,
  });
}

/** The session and its loaded transcript (the session may be deleted while it loads). */
async function open(ctx: SessionContext, id: string) {
  ctx.store.require(id);
  const entries = await ctx.store.entries(id);
  return { session: ctx.store.require(id), entries };
}

function parentOf(session: StoredSession, entries: Map<string, StoredEntry>, parentId: string | null | undefined): string | null {
  if (parentId == null) return session.active_leaf;
  if (!entries.has(parentId)) throw sessionError('parent_not_found', `parent ${parentId} does not exist in session ${session.session_id}`);
  return parentId;
}

export function registerTranscriptWrites(ctx: SessionContext): void {
  const fn = <T>(id: string, description: string, schema: z.ZodType<T>, handler: (input: T) => unknown) =>
    registerHandler(ctx.client, 'session', id, { description, schema }, handler);

  fn(
    'session::append',
    'Append one message or custom entry (idempotent on entry_id); fires session::message-added',
    AppendInput,
    async (input) => {
      if ((input.message === undefined) === (input.custom === undefined))
        throw sessionError('invalid_request', 'session::append: give exactly one of message or custom');
      const { session, entries } = await open(ctx, input.session_id);
      if (input.entry_id) {
        const existing = entries.get(input.entry_id);
        // a replayed write returns the entry it made before: nothing moves, nothing fires
        if (existing) return { entry_id: existing.id, parent_id: existing.parent_id, timestamp: existing.timestamp };
      }
      const parent = parentOf(session, entries, input.parent_id);
      const body: NewEntry = input.message ? { message: input.message as AgentMessage } : { custom: input.custom! };
      const id = input.entry_id ?? `e_${randomUUID()}`;
      const entry = makeEntry(ctx, parent, id, session.next_seq, body, input.origin ?? undefined);
      checkEntries(ctx, 'session::append', session, [entry]);
      addEntry(ctx, session, entries, entry);
      await persist(ctx, session.session_id, 'storing the entry', [
        ctx.store.saveEntry(session.session_id, entry),
        ctx.store.saveSession(session),
      ]);
      emitAdded(ctx, session, entry);
      return { entry_id: entry.id, parent_id: entry.parent_id, timestamp: entry.timestamp };
    },
  );

  fn('session::append-many', 'Append messages in order, each under the previous one (not idempotent)', AppendManyInput, async (input) => {
    if (input.messages.length === 0) throw sessionError('empty_batch', 'session::append-many: messages is empty');
    const { session, entries } = await open(ctx, input.session_id);
    let parent = parentOf(session, entries, input.parent_id);
    const added: StoredEntry[] = [];
    for (const message of input.messages) {
      const seq = session.next_seq + added.length;
      const entry = makeEntry(ctx, parent, `e_${randomUUID()}`, seq, { message: message as AgentMessage }, input.origin ?? undefined);
      added.push(entry);
      parent = entry.id;
    }
    // all or nothing: one message over a quota refuses the batch
    checkEntries(ctx, 'session::append-many', session, added);
    for (const entry of added) addEntry(ctx, session, entries, entry);
    await persist(ctx, session.session_id, 'storing the entries', [
      ...added.map((entry) => ctx.store.saveEntry(session.session_id, entry)),
      ctx.store.saveSession(session),
    ]);
    for (const entry of added) emitAdded(ctx, session, entry);
    return { entry_ids: added.map((e) => e.id), last_entry_id: parent };
  });

  fn(
    'session::update-message',
    "Replace a message's content (and an assistant's stop_reason, usage, …); fires session::message-updated with the next revision",
    UpdateInput,
    async (input) => {
      const { session, entries } = await open(ctx, input.session_id);
      const entry = requireEntry(entries, session.session_id, input.entry_id);
      if (entry.kind !== 'message') throw sessionError('invalid_entry_kind', `entry ${entry.id} is a custom entry, not a message`);
      const role = entry.message.role;
      if (input.details !== undefined && role !== 'function_result' && role !== 'custom')
        throw sessionError('details_not_supported', `details are only kept on function_result and custom messages, not ${role}`);
      const patch = Object.fromEntries(
        Object.keys(AssistantPatch).flatMap((k) =>
          input[k as keyof typeof input] === undefined ? [] : [[k, input[k as keyof typeof input]]],
        ),
      );
      if (Object.keys(patch).length > 0 && role !== 'assistant')
        throw sessionError(
          'invalid_request',
          `session::update-message: ${Object.keys(patch).join(', ')} only apply to assistant messages, not ${role}`,
        );
      if (input.expected_revision != null && input.expected_revision !== entry.revision)
        return { updated: false, revision: entry.revision };
      const next = {
        ...entry.message,
        ...patch,
        content: input.content,
        ...(input.details !== undefined ? { details: input.details } : {}),
      } as AgentMessage;
      // measured as it will be stored, and checked before the entry changes (a streaming writer's
      // growing message meets the quotas here; a shrinking one always passes)
      const bytes = jsonBytes({ ...entry, message: next, revision: entry.revision + 1 });
      const delta = bytes - ctx.store.entryBytes(entry);
      if (delta > 0) checkMessageSize(ctx, 'session::update-message', bytes);
      checkGrowth(ctx, 'session::update-message', session.session_id, ctx.store.usage(session.session_id), delta);
      entry.message = next;
      entry.revision++;
      ctx.store.setEntryBytes(entry, bytes);
      session.content_bytes = (session.content_bytes ?? 0) + delta;
      // the event carries this revision's snapshot even if a later update lands while this one is stored
      const { revision, message } = entry;
      await persist(ctx, session.session_id, 'storing the message', [
        ctx.store.saveEntry(session.session_id, entry),
        // the session's byte count changed with it
        ctx.store.saveSession(session),
      ]);
      const origin = input.origin ?? entry.origin;
      ctx.events.emit(SessionEvent.MessageUpdated, subjectOf(session, role), {
        session_id: session.session_id,
        entry_id: entry.id,
        message,
        revision,
        ...(origin ? { origin } : {}),
        timestamp: ctx.now(),
      });
      return { updated: true, revision };
    },
  );
}
