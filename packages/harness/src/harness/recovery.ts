import { randomUUID } from 'node:crypto';
import type { EngClient } from '@eng/sdk';
import type { EventTypes } from '../shared/event-types.ts';
import { appendResult, resultMessage } from './calls.ts';
import { HarnessEvent } from './events.ts';
import type { HarnessService } from './service.ts';
import type { TurnStore } from './store.ts';
import type { TurnRecord } from './types.ts';

// A harness that starts finds the turns its predecessor left unfinished (it was killed): a turn
// waiting for approvals resumes waiting — its state is all in the record; a turn that was
// generating or running a function fails cleanly: the partial answer is closed with an error, a
// running call gets an error result, the session leaves `working`, and messages queued behind it
// start a new turn.

const INTERRUPTED = 'interrupted: the harness restarted during this turn';

export async function recoverTurns(
  client: EngClient,
  store: TurnStore,
  service: HarnessService,
  events: EventTypes,
): Promise<{ resumed: number; failed: number }> {
  let resumed = 0;
  let failed = 0;
  for (const record of await store.unfinished()) {
    if (service.turns.has(record.session_id)) continue;
    if (record.status === 'awaiting_functions' && record.pending_function_calls.every((c) => c.state === 'held')) {
      service.startTurn(record, undefined, true);
      resumed++;
      continue;
    }
    await failInterrupted(client, store, events, record);
    failed++;
    if (record.queued.length) {
      const queued = record.queued;
      service.startTurn({
        ...record,
        turn_id: `t_${randomUUID()}`,
        status: 'running',
        step: 0,
        user_entry_id: queued[0]?.entry_id ?? record.user_entry_id,
        pending_function_calls: [],
        queued,
        result: undefined,
        result_error: undefined,
        reason: undefined,
        traceparent: undefined,
        started_at: Date.now(),
      });
    }
  }
  return { resumed, failed };
}

async function failInterrupted(client: EngClient, store: TurnStore, events: EventTypes, record: TurnRecord): Promise<void> {
  const sessionId = record.session_id;
  if (record.assistant_entry_id) {
    const got = await client
      .call<{ entry?: { kind: string; message?: { role: string; content: unknown[]; stop_reason?: string } } } | null>(
        'session::get-message',
        { session_id: sessionId, entry_id: record.assistant_entry_id },
        { timeoutMs: 15_000 },
      )
      .catch(() => null);
    const message = got?.entry?.message;
    if (message?.role === 'assistant' && !message.stop_reason) {
      await client
        .call(
          'session::update-message',
          {
            session_id: sessionId,
            entry_id: record.assistant_entry_id,
            content: message.content,
            stop_reason: 'error',
            error_message: INTERRUPTED,
            error_kind: 'transient',
            origin: { turn_id: record.turn_id, recovered: true },
          },
          { timeoutMs: 15_000 },
        )
        .catch(() => undefined);
    }
  }
  for (const call of record.pending_function_calls) {
    const message = resultMessage({ id: call.function_call_id, function_id: call.function_id }, `Error: ${INTERRUPTED}`, true, {
      error: { kind: 'function_error', message: INTERRUPTED },
    });
    await appendResult({ client, sessionId, turnId: record.turn_id, step: call.step }, message).catch(() => undefined);
  }
  record.status = 'failed';
  record.result_error = INTERRUPTED;
  record.reason = 'interrupted';
  record.pending_function_calls = [];
  record.assistant_entry_id = undefined;
  const queued = record.queued;
  record.queued = [];
  await store.save(record);
  record.queued = queued;
  await client
    .call('session::set-status', { session_id: sessionId, status: 'error', reason: INTERRUPTED }, { timeoutMs: 15_000 })
    .catch(() => undefined);
  events.emit(HarnessEvent.TurnCompleted, {
    session_id: sessionId,
    turn_id: record.turn_id,
    status: 'failed',
    result_error: INTERRUPTED,
    reason: 'interrupted',
    timestamp: Date.now(),
    terminal: true,
  });
}
