import type { Entry } from '../lib/chat/transcript.ts';
import { engine } from './client.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';

/**
 * The chat's live surface (console-worker.md §2.3): this tab registers hidden functions
 * (`metadata: {internal: true, 'eng.ui': true}`) and binds them to the chat stack's trigger
 * types. The transcript renders from `session::message-added/updated` (bound per open
 * conversation, filtered by `session_id`); the sidebar follows `created`, `status-changed`,
 * `meta-updated`, `deleted` and every session's user messages (`message-added` with
 * `roles: ['user']`); cards follow `approval::pending-created/resolved`; the picker follows
 * `router::models::changed` and `router::provider::changed`. A binding made before its worker is
 * connected waits inactive and starts delivering when the worker comes; the SDK replays every
 * registration after a reconnect.
 */

export type ChatEvent =
  | { type: 'message'; session_id: string; entry: Entry }
  | { type: 'status'; session_id: string; status: string; status_reason?: string; timestamp?: number }
  | { type: 'meta'; session_id: string; title?: string; description?: string; timestamp?: number }
  | { type: 'created'; session_id: string }
  /** A user message was added to any session (the conversation list: order, and sessions that just got a transcript). */
  | { type: 'activity'; session_id: string; timestamp?: number }
  | { type: 'deleted'; session_id: string }
  | { type: 'turn-started'; session_id: string; turn_id: string }
  | { type: 'turn-completed'; session_id: string; turn_id: string; status: string; result_error?: string; reason?: string }
  | { type: 'pending-created'; session_id: string; function_call_id: string; function_id: string }
  | { type: 'pending-resolved'; session_id: string; function_call_id: string; outcome: string; reason?: string; resolved_at?: number }
  | { type: 'models-changed' }
  | { type: 'providers-changed' };

type Listener = (event: ChatEvent) => void;
const listeners = new Set<Listener>();

export function onChatEvent(listener: Listener): () => void {
  ensureBindings();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function emit(event: ChatEvent): void {
  for (const l of listeners) l(event);
}

/**
 * A change this console made and the engine's answer confirmed (a held call it resolved), applied
 * at once as its event: the page does not wait for the event, which may come late (or not at all,
 * to a page whose bindings are still being made after a reload). When the event comes it changes
 * nothing more.
 */
export function emitConfirmed(event: ChatEvent): void {
  emit(event);
}

const hidden = { internal: true, 'eng.ui': true };
const tab = Math.random().toString(36).slice(2, 10);
const fnId = (name: string) => `${UI_FUNCTION_PREFIX}${tab}::chat::${name}`;
type Payload = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Trigger types bound once, for every session (the sidebar and the picker need them all). */
const STATIC: Array<[type: string, name: string, map: (p: Payload) => ChatEvent | undefined, config?: Record<string, unknown>]> = [
  [
    'session::status-changed',
    'status',
    (p) => ({
      type: 'status',
      session_id: str(p.session_id),
      status: str(p.status),
      status_reason: typeof p.status_reason === 'string' ? p.status_reason : undefined,
      timestamp: typeof p.timestamp === 'number' ? p.timestamp : undefined,
    }),
  ],
  [
    'session::meta-updated',
    'meta',
    (p) => ({
      type: 'meta',
      session_id: str(p.session_id),
      title: typeof p.title === 'string' ? p.title : undefined,
      timestamp: typeof p.timestamp === 'number' ? p.timestamp : undefined,
    }),
  ],
  ['session::created', 'created', (p) => ({ type: 'created', session_id: str(p.session_id) })],
  ['session::deleted', 'deleted', (p) => ({ type: 'deleted', session_id: str(p.session_id) })],
  [
    'session::message-added',
    'activity',
    (p) => ({ type: 'activity', session_id: str(p.session_id), timestamp: typeof p.timestamp === 'number' ? p.timestamp : undefined }),
    // user messages only: one event per message sent, never the streaming of an answer
    { roles: ['user'] },
  ],
  ['harness::turn-started', 'turn-started', (p) => ({ type: 'turn-started', session_id: str(p.session_id), turn_id: str(p.turn_id) })],
  [
    'harness::turn-completed',
    'turn-completed',
    (p) =>
      p.terminal === false
        ? undefined
        : {
            type: 'turn-completed',
            session_id: str(p.session_id),
            turn_id: str(p.turn_id),
            status: str(p.status),
            result_error: typeof p.result_error === 'string' ? p.result_error : undefined,
            reason: typeof p.reason === 'string' ? p.reason : undefined,
          },
  ],
  [
    'approval::pending-created',
    'pending-created',
    (p) => ({
      type: 'pending-created',
      session_id: str(p.session_id),
      function_call_id: str(p.function_call_id),
      function_id: str(p.function_id),
    }),
  ],
  [
    'approval::pending-resolved',
    'pending-resolved',
    (p) => ({
      type: 'pending-resolved',
      session_id: str(p.session_id),
      function_call_id: str(p.function_call_id),
      outcome: str(p.outcome),
      reason: typeof p.reason === 'string' ? p.reason : undefined,
      resolved_at: typeof p.resolved_at === 'number' ? p.resolved_at : undefined,
    }),
  ],
  ['router::models::changed', 'models-changed', () => ({ type: 'models-changed' })],
  ['router::provider::changed', 'providers-changed', () => ({ type: 'providers-changed' })],
];

let bound = false;

function ensureBindings(): void {
  if (bound) return;
  bound = true;
  const client = engine();
  for (const [type, name, map, config] of STATIC) {
    const id = fnId(name);
    client.registerFunction(
      id,
      (payload: Payload) => {
        const event = map(payload ?? {});
        if (event) emit(event);
        return null;
      },
      { description: `console UI: chat live update on ${type}`, metadata: hidden },
    );
    client.registerTrigger({ type, function_id: id, config: config ?? {} });
  }
  const onMessage = (payload: Payload) => {
    const sessionId = str(payload?.session_id);
    const entryId = str(payload?.entry_id);
    if (!sessionId || !entryId) return null;
    const entry: Entry = {
      entry_id: entryId,
      revision: typeof payload.revision === 'number' ? payload.revision : 0,
      ...(payload.parent_id !== undefined ? { parent_id: payload.parent_id as string | null } : {}),
      ...(typeof payload.timestamp === 'number' && payload.parent_id !== undefined ? { timestamp: payload.timestamp } : {}),
      ...(payload.origin ? { origin: payload.origin as Record<string, unknown> } : {}),
      ...(payload.message ? { message: payload.message as Entry['message'] } : {}),
      ...(payload.custom ? { custom: payload.custom as Entry['custom'] } : {}),
    };
    emit({ type: 'message', session_id: sessionId, entry });
    return null;
  };
  client.registerFunction(fnId('message-added'), onMessage, { description: 'console UI: chat transcript (added)', metadata: hidden });
  client.registerFunction(fnId('message-updated'), onMessage, { description: 'console UI: chat transcript (updated)', metadata: hidden });
}

const watched = new Map<string, { count: number; unregister(): void }>();

/**
 * Bind `session::message-added/updated` for one conversation while something shows it. Bindings
 * are ref-counted: the second watcher of a session shares the first one's.
 */
export function watchSession(sessionId: string): () => void {
  ensureBindings();
  const known = watched.get(sessionId);
  if (known) known.count++;
  else {
    const client = engine();
    const refs = (['message-added', 'message-updated'] as const).map((name) =>
      client.registerTrigger({ type: `session::${name}`, function_id: fnId(name), config: { session_id: sessionId } }),
    );
    watched.set(sessionId, {
      count: 1,
      unregister: () => {
        for (const r of refs) r.unregister();
      },
    });
  }
  return () => {
    const w = watched.get(sessionId);
    if (!w) return;
    w.count--;
    if (w.count <= 0) {
      w.unregister();
      watched.delete(sessionId);
    }
  };
}
