import { pathToFileURL } from 'node:url';
import type { EngClient } from '@eng/sdk';
import { EventTypes } from '../shared/event-types.ts';
import { StateKv } from '../shared/kv.ts';
import { runWorker, untilStateAnswers, type WorkerRole } from '../shared/worker.ts';
import { registerAttachments } from './attachments.ts';
import type { SessionContext } from './context.ts';
import { defineSessionEvents } from './events.ts';
import { registerLifecycle } from './lifecycle.ts';
import { formatBytes } from './quota.ts';
import { registerTranscriptReads } from './reading.ts';
import { bindSessionSettings } from './settings.ts';
import { SessionStore } from './store.ts';
import { registerTranscriptWrites } from './transcript.ts';

/** The session store (`session-manager`): transcripts, forks, drafts and attachments over state::*. */
export const sessionRole: WorkerRole = {
  name: 'session-manager',
  description: 'chat session store: session::* functions and six trigger types, durable in the engine state store',
  async start(client: EngClient, log) {
    const kv = new StateKv(client, { timeoutMs: 30_000 });
    const store = new SessionStore(kv);
    const sessions = await untilStateAnswers(() => store.init(), log);
    const settings = await bindSessionSettings(client, log);
    const events = new EventTypes(client);
    const ctx: SessionContext = { client, store, events, settings: settings.current, now: Date.now };
    defineSessionEvents(events);
    registerLifecycle(ctx);
    registerTranscriptWrites(ctx);
    registerTranscriptReads(ctx);
    registerAttachments(ctx);
    return {
      summary: `session::* functions and 6 trigger types; ${sessions} stored session${sessions === 1 ? '' : 's'} holding ${formatBytes(store.totalBytes)}`,
      stop: () => kv.flush(),
    };
  },
};

export function main(): Promise<void> {
  return runWorker(sessionRole);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
