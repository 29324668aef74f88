/**
 * The chat stack's roles: each runs as its own worker process (`eng-chat <role>`), under the
 * worker name the engine's catalog gives it. `module` is relative to this folder and exports
 * `main(): Promise<void>`. `eng worker add harness` configures all of them.
 */
export interface ChatRole {
  /** Worker name in config.yaml and `engine::workers::list` (the iii workers' names). */
  worker: string;
  module: string;
  description: string;
}

export const CHAT_ROLES: Record<string, ChatRole> = {
  session: {
    worker: 'session-manager',
    module: './session/worker.ts',
    description: 'session store: transcripts, forks, drafts, attachments',
  },
  approval: { worker: 'approval-gate', module: './approval/worker.ts', description: 'approval gate: held function calls, modes, grants' },
  router: { worker: 'llm-router', module: './router/worker.ts', description: 'model router: generation, model catalog, providers' },
  'provider-openai': { worker: 'provider-openai', module: './providers/openai/worker.ts', description: 'OpenAI-compatible provider' },
  'provider-anthropic': { worker: 'provider-anthropic', module: './providers/anthropic/worker.ts', description: 'Anthropic provider' },
  context: { worker: 'context-manager', module: './context/worker.ts', description: 'context manager: token budgeting and compaction' },
  harness: { worker: 'harness', module: './harness/worker.ts', description: 'durable turn loop' },
};

export function roleForWorker(worker: string): string | undefined {
  return Object.entries(CHAT_ROLES).find(([, role]) => role.worker === worker)?.[0];
}
