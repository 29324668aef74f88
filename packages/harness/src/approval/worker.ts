import { pathToFileURL } from 'node:url';
import type { EngClient } from '@eng/sdk';
import { EventTypes } from '../shared/event-types.ts';
import { StateKv } from '../shared/kv.ts';
import { runWorker, untilStateAnswers, type WorkerRole } from '../shared/worker.ts';
import { bindGateSettings } from './config.ts';
import { defineApprovalEvents } from './events.ts';
import { callHarnessBack, type GateContext, registerGateFunctions } from './gate.ts';
import { PendingInbox } from './pending.ts';
import { registerSettingsFunctions, SettingsStore } from './settings.ts';
import { engineLookup } from './targets.ts';

/** The approval gate (`approval-gate`): held function calls, per-session modes and grants, over state::*. */
export const approvalRole: WorkerRole = {
  name: 'approval-gate',
  description: 'approval gate: approval::* functions and the pending-created / pending-resolved trigger types',
  async start(client: EngClient, log) {
    const kv = new StateKv(client, { timeoutMs: 30_000 });
    const config = await bindGateSettings(client, log);
    const events = new EventTypes(client);
    const inbox = new PendingInbox(
      kv,
      events,
      (record, delivery, resolution) =>
        delivery === 'hook' ? callHarnessBack(client, record, resolution.outcome, resolution.reason) : Promise.resolve({}),
      log,
    );
    const settings = new SettingsStore(kv, config.current);
    const lookup = engineLookup((functionId, payload) => client.call(functionId, payload, { timeoutMs: 5000 }));
    const ctx: GateContext = { client, lookup, settings, inbox, gate: config.current };
    defineApprovalEvents(events);
    const waiting = await untilStateAnswers(() => inbox.load(), log);
    registerSettingsFunctions(client, settings);
    registerGateFunctions(ctx);
    bindLifecycle(client, ctx, log);
    return {
      summary: `approval::* functions and 2 trigger types; ${waiting} pending call${waiting === 1 ? '' : 's'}`,
      stop: async () => {
        inbox.stop();
        await kv.flush();
      },
    };
  },
};

/**
 * Held calls of a deleted session, or of a turn that ended, can never run: settle them as
 * `aborted`. The bindings wait (parked) until the session store and the harness are up.
 */
function bindLifecycle(client: EngClient, ctx: GateContext, log: (line: string) => void): void {
  const abort = async (sessionId: string, turnId: string | undefined, reason: string) => {
    for (const key of ctx.inbox.keysOf(sessionId, turnId)) await ctx.inbox.resolve(key.session_id, key.function_call_id, 'aborted', reason);
  };
  client.registerFunction(
    'approval::on-session-deleted',
    async (event: { session_id?: unknown }) => {
      if (typeof event?.session_id !== 'string') return {};
      await abort(event.session_id, undefined, 'the session was deleted');
      await ctx.settings.drop(event.session_id).catch((err) => log(`dropping settings of ${event.session_id}: ${(err as Error).message}`));
      return {};
    },
    { description: 'settles the held calls of a deleted session as aborted', metadata: { internal: true } },
  );
  client.registerFunction(
    'approval::on-turn-completed',
    async (event: { session_id?: unknown; turn_id?: unknown; terminal?: unknown }) => {
      if (typeof event?.session_id !== 'string' || typeof event.turn_id !== 'string' || event.terminal === false) return {};
      await abort(event.session_id, event.turn_id, 'the turn ended before a decision was made');
      return {};
    },
    { description: 'settles the held calls of a finished turn as aborted', metadata: { internal: true } },
  );
  client.registerTrigger({ type: 'session::deleted', function_id: 'approval::on-session-deleted', config: {} });
  client.registerTrigger({ type: 'harness::turn-completed', function_id: 'approval::on-turn-completed', config: {} });
}

export function main(): Promise<void> {
  return runWorker(approvalRole);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
