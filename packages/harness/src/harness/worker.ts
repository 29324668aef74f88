import { pathToFileURL } from 'node:url';
import type { EngClient } from '@eng/sdk';
import { EventTypes } from '../shared/event-types.ts';
import { runWorker, type WorkerRole } from '../shared/worker.ts';
import { defineHarnessEvents } from './events.ts';
import { recoverTurns } from './recovery.ts';
import { HarnessService } from './service.ts';
import { TurnStore } from './store.ts';

// `harness` (spec: console-worker §2.3): the durable turn loop, an ordinary worker.

const RECOVERY_RETRY_MS = 2000;
const RECOVERY_DELAY_MS = 300;
const SHUTDOWN_WAIT_MS = 3000;

export function startHarness(
  client: EngClient,
  log: (line: string) => void = () => {},
): { service: HarnessService; stop(): Promise<void> } {
  const store = new TurnStore(client);
  const events = new EventTypes(client);
  defineHarnessEvents(events);
  const service = new HarnessService(client, store, events);
  const fn = (id: string, description: string, handler: Parameters<EngClient['registerFunction']>[1], metadata?: Record<string, unknown>) =>
    client.registerFunction(id, handler, { description, ...(metadata ? { metadata } : {}) });

  fn(
    'harness::send',
    'Send a user message: {session_id, message, model, provider?, idempotency_key?, session?, options?} → {session_id, turn_id, accepted, merged?, queued?, deduplicated?}',
    (input, ctx) => service.send(input, ctx),
  );
  fn('harness::run', 'harness::send, held open until the turn ends: → {…, status, result?, result_error?}', (input, ctx) =>
    service.run(input, ctx),
  );
  fn(
    'harness::regenerate',
    'Answer the last user message again (Retry, Regenerate): {session_id, model, provider?, options?, entry_id?} → {session_id, turn_id, accepted, user_entry_id, superseded}; refused while a turn runs',
    (input, ctx) => service.regenerate(input, ctx),
  );
  fn(
    'harness::edit',
    'Replace the last user message and answer it: {session_id, entry_id, message, model, provider?, options?, idempotency_key?} → {session_id, turn_id, accepted, user_entry_id, superseded}; refused while a turn runs',
    (input, ctx) => service.edit(input, ctx),
  );
  fn('harness::stop', 'Stop the running turn of a session: {session_id, turn_id?} → {stopping}', (input) => service.stop(input));
  fn('harness::status', "A session's current or latest turn: {session_id} → status record or null", (input) => service.status(input));
  fn('harness::unqueue', 'Take a queued message back: {session_id, entry_id} → {removed}', (input) => service.unqueue(input));
  fn('harness::edit_queued', 'Change a queued message: {session_id, entry_id, message} → {edited}', (input) => service.editQueued(input));
  fn(
    'harness::function::resolve',
    'The approval gate resolves a held call: {session_id, function_call_id, action: execute|deliver, content?, is_error?, details?} → {resolved, turn_resumed?}',
    (input) => service.resolveFunction(input),
    { internal: true },
  );

  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const recover = async () => {
    try {
      const { resumed, failed } = await recoverTurns(client, store, service, events);
      if (resumed || failed) log(`recovered unfinished turns: ${resumed} resumed, ${failed} failed cleanly`);
    } catch (err) {
      if (stopped) return;
      log(`recovering unfinished turns failed (${(err as Error).message}); retrying`);
      retry = setTimeout(() => void recover(), RECOVERY_RETRY_MS);
    }
  };
  // the engine hands over the existing bindings of our trigger types once they are registered: give
  // it a moment, so a turn failed during recovery is announced to whoever listens
  retry = setTimeout(() => void recover(), RECOVERY_DELAY_MS);

  return {
    service,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      // running turns end as failed (the session must not stay `working`); waiting ones resume on restart
      const running = [...service.turns.values()].filter((t) => t.record.status === 'running');
      await Promise.race([
        Promise.all(running.map((t) => t.interrupt('the harness was stopped during this turn'))),
        sleep(SHUTDOWN_WAIT_MS),
      ]);
      await store.flush();
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const harnessRole: WorkerRole = {
  name: 'harness',
  description:
    'chat turn loop: harness::send/run/regenerate/edit/stop/status, function calls through the approval gate, streaming into the session store',
  async start(client, log) {
    const harness = startHarness(client, log);
    return { summary: 'harness::* functions and 3 trigger types', stop: () => harness.stop() };
  },
};

export function main(): Promise<void> {
  return runWorker(harnessRole);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
