import { z } from 'zod';
import type { ContentBlock } from '../router/types.ts';

// spec: console-worker §2.3 — `harness::send` as the console builds it, and the turn record the
// harness keeps in the engine's state store so a restarted harness can finish what it started.

const str = (field: string) =>
  z
    .string({ error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` });

const TextBlock = z.object({ type: z.literal('text'), text: z.string({ error: 'text must be a string' }) });
const ImageBlock = z.object({ type: z.literal('image'), mime: str('mime'), data: str('data'), attachment_id: z.string().nullish() });
const FileBlock = z.looseObject({
  type: z.literal('file'),
  attachment_id: str('attachment_id'),
  name: z.string(),
  mime: z.string(),
  size: z.number(),
});
const UserBlock = z.discriminatedUnion('type', [TextBlock, ImageBlock, FileBlock], {
  error: 'content blocks of a user message are text, image or file',
});

export const UserMessageInput = z.union(
  [
    z.string().min(1, { error: 'message must not be empty' }),
    z.object({
      role: z.literal('user', { error: 'message.role must be "user"' }),
      content: z
        .array(UserBlock, { error: 'message.content must be an array of content blocks' })
        .min(1, { error: 'message.content must not be empty' }),
      timestamp: z.number().optional(),
    }),
  ],
  { error: 'message must be a string or {role:"user", content:[…]}' },
);

export const FunctionPolicy = z.object({
  allow: z.array(z.string(), { error: 'options.functions.allow must be an array of function id globs' }).optional(),
  deny: z.array(z.string(), { error: 'options.functions.deny must be an array of function id globs' }).optional(),
  expose: z.string().optional(),
});

export const SendOptions = z.looseObject({
  mode: z.enum(['plan', 'ask', 'agent'], { error: 'options.mode must be plan, ask or agent' }).optional(),
  functions: FunctionPolicy.optional(),
  system_prompt: z.string().optional(),
  system_prompt_strategy: z.enum(['enrich', 'override'], { error: 'options.system_prompt_strategy must be enrich or override' }).optional(),
  thinking_level: z
    .enum(['minimal', 'low', 'medium', 'high', 'xhigh'], { error: 'options.thinking_level must be minimal, low, medium, high or xhigh' })
    .optional(),
  provider_options: z.record(z.string(), z.unknown()).optional(),
  max_turns: z.number().int().min(1, { error: 'options.max_turns must be at least 1' }).max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type SendOptions = z.infer<typeof SendOptions>;

export const SendInput = z.object({
  session_id: str('session_id').max(512),
  message: UserMessageInput,
  model: str('model'),
  provider: z.string().min(1).optional(),
  idempotency_key: z.string().min(1, { error: 'idempotency_key must not be empty' }).max(256).optional(),
  session: z
    .object({
      title: z.string().optional(),
      description: z.string().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  options: SendOptions.optional(),
});
export type SendInput = z.infer<typeof SendInput>;

export type TurnStatus = 'running' | 'awaiting_functions' | 'completed' | 'cancelled' | 'failed';

export interface PendingCall {
  function_call_id: string;
  function_id: string;
  arguments: unknown;
  /** The step whose generation made the call (its result entry id carries it). */
  step: number;
  /** held: waiting for a human; running: executing (after an allow). */
  state: 'held' | 'running';
}

export interface QueuedMessage {
  id: string;
  session_id: string;
  entry_id: string;
  message: { role: 'user'; content: ContentBlock[]; timestamp: number };
  queued_at: number;
}

/** What the state store keeps per session: the latest turn. */
export interface TurnRecord {
  session_id: string;
  turn_id: string;
  status: TurnStatus;
  model: string;
  provider: string;
  options: SendOptions;
  /** Generation steps started (0 before the first). */
  step: number;
  max_turns: number;
  /** The assistant entry of the step in progress. */
  assistant_entry_id?: string;
  user_entry_id: string;
  pending_function_calls: PendingCall[];
  queued: QueuedMessage[];
  started_at: number;
  updated_at: number;
  result?: string;
  result_error?: string;
  reason?: string;
  /** traceparent of the turn span, so a resumed turn stays in its trace. */
  traceparent?: string;
}

/** `e_idem_<key with anything but [A-Za-z0-9_-] replaced by _>` (spec §2.3). */
export function idempotentEntryId(key: string): string {
  return `e_idem_${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
