import { pathToFileURL } from 'node:url';
import type { EngClient } from '@eng/sdk';
import { runWorker } from '../shared/worker.ts';
import { Compactor } from './compact.ts';

// `context-manager` (spec: console-worker §2.6): compaction of a conversation through the router.

export function startContext(client: EngClient): Compactor {
  const compactor = new Compactor(client);
  client.registerFunction('context::compact', (input) => compactor.compact(input), {
    description:
      'Summarise a conversation before its last tail_turns user turns: {messages, model:{id, provider?, limits?}, options?:{tail_turns, previous_summary, preserve_recent_tokens, lease_key}} → ok|busy|empty|overflow',
  });
  return compactor;
}

export async function main(): Promise<void> {
  await runWorker({
    name: 'context-manager',
    description: 'context manager: token budgeting and compaction',
    start: async (client) => {
      startContext(client);
      return { summary: 'context::compact' };
    },
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
