import { randomUUID } from 'node:crypto';
import type { EngClient, InvocationContext } from '@eng/sdk';
import { z } from 'zod';
import type { AgentMessage, ContentBlock } from '../router/types.ts';
import { domainError, parseRequest } from '../shared/errors.ts';
import type { EventTypes } from '../shared/event-types.ts';
import { EditInput, RegenerateInput, rewindPoint, turnActive } from './rewind.ts';
import type { TurnStore } from './store.ts';
import { readTranscript } from './transcript.ts';
import { Turn } from './turn.ts';
import { idempotentEntryId, SendInput, type TurnRecord, UserMessageInput } from './types.ts';

// spec: console-worker §2.3 — harness::send / run / stop / status / unqueue / edit_queued and
// harness::function::resolve (the approval gate's way back into a waiting turn); harness::regenerate
// and harness::edit answer the last user message again or replace it (rewind.ts).

const DEFAULT_MAX_TURNS = 16;
const SessionRef = z.object({
  session_id: z.string({ error: 'session_id is required' }).min(1, { error: 'session_id must not be empty' }),
});
const StopInput = SessionRef.extend({ turn_id: z.string().min(1).optional() });
const QueueEdit = SessionRef.extend({ entry_id: z.string({ error: 'entry_id is required' }).min(1), message: UserMessageInput.optional() });
const ResolveInput = SessionRef.extend({
  function_call_id: z.string({ error: 'function_call_id is required' }).min(1),
  turn_id: z.string().optional(),
  action: z.enum(['execute', 'deliver'], { error: 'action must be execute or deliver' }),
  content: z.unknown().optional(),
  is_error: z.boolean().optional(),
  details: z.unknown().optional(),
});

export interface SendAnswer {
  session_id: string;
  turn_id: string;
  accepted: boolean;
  merged?: boolean;
  queued?: boolean;
  deduplicated?: boolean;
}

/** What harness::regenerate and harness::edit answer: the new turn, the message it answers, what left the path. */
export interface RewindAnswer extends SendAnswer {
  user_entry_id: string;
  /** Entries no longer on the active path (kept on their own branch). */
  superseded: string[];
}

function userMessage(message: z.infer<typeof UserMessageInput>): { role: 'user'; content: ContentBlock[]; timestamp: number } {
  if (typeof message === 'string') return { role: 'user', content: [{ type: 'text', text: message }], timestamp: Date.now() };
  return { role: 'user', content: message.content as ContentBlock[], timestamp: message.timestamp ?? Date.now() };
}

/** A worker the harness needs is not connected: say which, instead of a bare function_not_found. */
function unavailable(functionId: string, what: string) {
  return (err: unknown): never => {
    if ((err as { code?: string }).code === 'function_not_found') {
      throw domainError(
        'harness',
        'dependency_unavailable',
        `${what} is not running (${functionId} is not registered); start it with eng worker add harness`,
      );
    }
    throw err;
  };
}

export class HarnessService {
  readonly turns = new Map<string, Turn>();
  /** One send at a time per session: a second one sees the turn the first started. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: EngClient,
    private readonly store: TurnStore,
    private readonly events: EventTypes,
  ) {}

  private locked<T>(sessionId: string, run: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(sessionId) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => undefined);
    this.locks.set(sessionId, tail);
    void tail.then(() => {
      if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
    });
    return next;
  }

  async send(raw: unknown, ctx?: InvocationContext): Promise<SendAnswer> {
    const input = parseRequest('harness', 'harness::send', SendInput, raw);
    return this.locked(input.session_id, () => this.accept(input, ctx?.traceparent));
  }

  /** `harness::run`: send, then hold the call open until that turn ends. */
  async run(raw: unknown, ctx?: InvocationContext): Promise<Record<string, unknown>> {
    const answer = await this.send(raw, ctx);
    const turn = this.turns.get(answer.session_id);
    const record = turn && turn.turnId === answer.turn_id ? await turn.done : await this.store.latest(answer.session_id);
    return {
      ...answer,
      status: record?.status,
      ...(record?.result !== undefined ? { result: record.result } : {}),
      ...(record?.result_error !== undefined ? { result_error: record.result_error } : {}),
    };
  }

  private async accept(input: SendInput, traceparent?: string): Promise<SendAnswer> {
    const sessionId = input.session_id;
    const entryId = input.idempotency_key ? idempotentEntryId(input.idempotency_key) : `e_${randomUUID()}`;
    if (input.idempotency_key) {
      const accepted = await this.store.acceptedTurn(sessionId, entryId);
      if (accepted) return { session_id: sessionId, turn_id: accepted, accepted: true, deduplicated: true };
    }
    // the model must be servable before anything is stored: no credentials → router/no_provider_for_model
    const routing = this.client.call<{ provider: string; model: string }>(
      'router::route',
      { model: input.model, provider: input.provider },
      { timeoutMs: 10_000 },
    );
    const reading = this.client.call<{ meta: unknown } | null>('session::get', { session_id: sessionId }, { timeoutMs: 15_000 });
    routing.catch(() => undefined);
    const [route, found] = await Promise.all([
      routing.catch(unavailable('router::route', 'the model router (llm-router)')),
      reading.catch(unavailable('session::get', 'the session store (session-manager)')),
    ]);
    if (!found) await this.createSession(input);
    const message = userMessage(input.message);
    const active = this.turns.get(sessionId);
    if (active?.open) {
      if (active.acceptsMerge) {
        await this.appendUser(sessionId, entryId, active.turnId, message, { merged: true });
        active.merged();
        await this.store.remember(sessionId, entryId, active.turnId);
        return { session_id: sessionId, turn_id: active.turnId, accepted: true, merged: true };
      }
      await active.enqueue({ id: `q_${randomUUID()}`, session_id: sessionId, entry_id: entryId, message, queued_at: Date.now() });
      await this.store.remember(sessionId, entryId, active.turnId);
      return { session_id: sessionId, turn_id: active.turnId, accepted: true, queued: true };
    }
    return this.begin(input, route, traceparent, { entry_id: entryId, message, idempotent: Boolean(input.idempotency_key) });
  }

  /**
   * Start a turn that answers a user message: `append` is written first (its write overlaps the
   * first step's reads), or the message is already stored (`existing`: a regenerate).
   */
  private async begin(
    input: Pick<SendInput, 'session_id' | 'options'>,
    route: { provider: string; model: string },
    traceparent: string | undefined,
    user: { entry_id: string; message: unknown; idempotent?: boolean; origin?: Record<string, unknown> } | { existing: string },
  ): Promise<SendAnswer> {
    const sessionId = input.session_id;
    const turnId = `t_${randomUUID()}`;
    const options = input.options ?? {};
    const userEntryId = 'existing' in user ? user.existing : user.entry_id;
    const record: TurnRecord = {
      session_id: sessionId,
      turn_id: turnId,
      status: 'running',
      model: route.model,
      provider: route.provider,
      options,
      step: 0,
      max_turns: options.max_turns ?? DEFAULT_MAX_TURNS,
      user_entry_id: userEntryId,
      pending_function_calls: [],
      queued: [],
      started_at: Date.now(),
      updated_at: Date.now(),
    };
    if ('existing' in user) {
      await this.store.save(record);
      this.startTurn(record, traceparent);
      return { session_id: sessionId, turn_id: turnId, accepted: true };
    }
    // the turn starts while the user message is being stored: its first reads overlap the write,
    // and its answer is appended only after it
    const appended = this.appendUser(sessionId, user.entry_id, turnId, user.message, user.origin);
    const saved = this.store.save(record);
    appended.catch(() => undefined);
    const turn = this.startTurn(record, traceparent, false, {
      entry_id: user.entry_id,
      message: user.message as AgentMessage,
      appended,
    });
    try {
      await Promise.all([appended, saved, user.idempotent ? this.store.remember(sessionId, user.entry_id, turnId) : undefined]);
    } catch (err) {
      turn.abort();
      throw err;
    }
    return { session_id: sessionId, turn_id: turnId, accepted: true };
  }

  /** `harness::regenerate`: answer the last user message again (Retry after a failure, Regenerate after an answer). */
  async regenerate(raw: unknown, ctx?: InvocationContext): Promise<RewindAnswer> {
    const input = parseRequest('harness', 'harness::regenerate', RegenerateInput, raw);
    return this.locked(input.session_id, async () => {
      const { route, point } = await this.rewind('harness::regenerate', input, input.entry_id);
      if (point.after.length)
        await this.client.call(
          'session::set-active-leaf',
          { session_id: input.session_id, entry_id: point.user.entry_id },
          { timeoutMs: 15_000 },
        );
      const answer = await this.begin(input, route, ctx?.traceparent, { existing: point.user.entry_id });
      return { ...answer, user_entry_id: point.user.entry_id, superseded: point.after };
    });
  }

  /** `harness::edit`: the last user message replaced by `message`, and answered; the old one and its answer leave the path. */
  async edit(raw: unknown, ctx?: InvocationContext): Promise<RewindAnswer> {
    const input = parseRequest('harness', 'harness::edit', EditInput, raw);
    const entryId = input.idempotency_key ? idempotentEntryId(input.idempotency_key) : `e_${randomUUID()}`;
    return this.locked(input.session_id, async () => {
      if (input.idempotency_key) {
        const accepted = await this.store.acceptedTurn(input.session_id, entryId);
        if (accepted)
          return {
            session_id: input.session_id,
            turn_id: accepted,
            accepted: true,
            deduplicated: true,
            user_entry_id: entryId,
            superseded: [],
          };
      }
      const { route, point } = await this.rewind('harness::edit', input, input.entry_id);
      await this.client.call(
        'session::set-active-leaf',
        { session_id: input.session_id, entry_id: point.user.parent_id },
        { timeoutMs: 15_000 },
      );
      const answer = await this.begin(input, route, ctx?.traceparent, {
        entry_id: entryId,
        message: userMessage(input.message),
        idempotent: Boolean(input.idempotency_key),
        origin: { edited: point.user.entry_id },
      });
      return { ...answer, user_entry_id: entryId, superseded: [point.user.entry_id, ...point.after] };
    });
  }

  /**
   * What a regenerate or an edit starts from, checked before anything changes: no turn running
   * (one that is finishing is waited for), the model servable, the session's last user message.
   */
  private async rewind(fn: string, input: RegenerateInput, wanted: string | undefined) {
    let active = this.turns.get(input.session_id);
    if (active && !active.open) {
      await active.done;
      active = this.turns.get(input.session_id);
    }
    if (active?.open) throw turnActive(input.session_id, fn);
    const routing = this.client.call<{ provider: string; model: string }>(
      'router::route',
      { model: input.model, provider: input.provider },
      { timeoutMs: 10_000 },
    );
    routing.catch(() => undefined);
    const [route, found] = await Promise.all([
      routing.catch(unavailable('router::route', 'the model router (llm-router)')),
      this.client
        .call<{ meta: unknown } | null>('session::get', { session_id: input.session_id }, { timeoutMs: 15_000 })
        .catch(unavailable('session::get', 'the session store (session-manager)')),
    ]);
    if (!found) throw domainError('harness', 'session_not_found', `${fn}: session ${input.session_id} does not exist`);
    const point = rewindPoint(input.session_id, await readTranscript(this.client, input.session_id), wanted, fn);
    return { route, point };
  }

  startTurn(record: TurnRecord, traceparent?: string, resumed = false, opening?: ConstructorParameters<typeof Turn>[3]): Turn {
    const turn = new Turn(
      {
        client: this.client,
        store: this.store,
        events: this.events,
        onFinished: (t) => {
          if (this.turns.get(t.sessionId) === t) this.turns.delete(t.sessionId);
        },
        onQueuedAfterStop: async (t, queued) => {
          const record: TurnRecord = {
            ...t.record,
            turn_id: `t_${randomUUID()}`,
            status: 'running',
            step: 0,
            user_entry_id: queued[0]?.entry_id ?? t.record.user_entry_id,
            pending_function_calls: [],
            queued: [...queued],
            result: undefined,
            result_error: undefined,
            reason: undefined,
            assistant_entry_id: undefined,
            traceparent: undefined,
            started_at: Date.now(),
            updated_at: Date.now(),
          };
          await this.store.save(record);
          return () => {
            // a message sent since the stop may already have started a turn: these join it
            const running = this.turns.get(record.session_id);
            if (running?.open) {
              void (async () => {
                for (const q of record.queued) await running.enqueue(q);
                record.status = 'cancelled';
                record.queued = [];
                await this.store.save(record);
              })().catch(() => undefined);
              return;
            }
            this.startTurn(record);
          };
        },
      },
      record,
      traceparent,
      opening,
    );
    this.turns.set(record.session_id, turn);
    turn.start(resumed);
    return turn;
  }

  /** A send for a session that does not exist creates it only when it says so (`session: {…}`). */
  private async createSession(input: SendInput): Promise<void> {
    if (!input.session) {
      throw domainError(
        'harness',
        'session_not_found',
        `session ${input.session_id} does not exist: create it with session::create, or pass "session": {} to harness::send to create it`,
      );
    }
    await this.client.call('session::ensure', { session_id: input.session_id, ...input.session }, { timeoutMs: 15_000 });
  }

  private async appendUser(sessionId: string, entryId: string, turnId: string, message: unknown, extra: Record<string, unknown> = {}) {
    await this.client.call(
      'session::append',
      { session_id: sessionId, entry_id: entryId, origin: { turn_id: turnId, ...extra }, message },
      { timeoutMs: 15_000 },
    );
  }

  async stop(raw: unknown): Promise<{ stopping: boolean }> {
    const input = parseRequest('harness', 'harness::stop', StopInput, raw);
    const turn = this.turns.get(input.session_id);
    if (!turn || (input.turn_id && input.turn_id !== turn.turnId)) return { stopping: false };
    return { stopping: turn.abort() };
  }

  async status(raw: unknown): Promise<Record<string, unknown> | null> {
    const input = parseRequest('harness', 'harness::status', SessionRef, raw);
    const record = this.turns.get(input.session_id)?.record ?? (await this.store.latest(input.session_id));
    if (!record) return null;
    return {
      session_id: record.session_id,
      turn_id: record.turn_id,
      status: record.status,
      step: record.step,
      turn_count: record.step,
      depth: 0,
      max_turns: record.max_turns,
      validation_retries: 0,
      max_validation_retries: 0,
      transient_resumes: 0,
      max_transient_resumes: 0,
      partial_result_available: false,
      pending_function_calls: record.pending_function_calls.map((c) => ({
        function_call_id: c.function_call_id,
        function_id: c.function_id,
        arguments: c.arguments,
        state: c.state,
      })),
      children: [],
      queued: record.queued,
      ...(record.result !== undefined ? { result: record.result } : {}),
      ...(record.result_error !== undefined ? { result_error: record.result_error } : {}),
    };
  }

  async unqueue(raw: unknown): Promise<{ removed: boolean }> {
    const input = parseRequest('harness', 'harness::unqueue', QueueEdit, raw);
    const turn = this.turns.get(input.session_id);
    return { removed: turn ? await turn.unqueue(input.entry_id) : false };
  }

  async editQueued(raw: unknown): Promise<{ edited: boolean }> {
    const input = parseRequest('harness', 'harness::edit_queued', QueueEdit, raw);
    if (!input.message) throw domainError('harness', 'invalid_request', 'harness::edit_queued: message is required');
    const turn = this.turns.get(input.session_id);
    return { edited: turn ? await turn.editQueued(input.entry_id, userMessage(input.message).content) : false };
  }

  async resolveFunction(raw: unknown): Promise<{ resolved: boolean; turn_resumed?: boolean }> {
    const input = parseRequest('harness', 'harness::function::resolve', ResolveInput, raw);
    const turn = this.turns.get(input.session_id);
    if (!turn || (input.turn_id && input.turn_id !== turn.turnId)) return { resolved: false };
    return turn.resolveCall(input.function_call_id, input.action, {
      content: input.content,
      is_error: input.is_error,
      details: input.details,
    });
  }
}
