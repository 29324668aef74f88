import { z } from 'zod';

// spec: console-worker.md §2.2 — the session store's wire types. Objects are loose: fields the
// schemas do not name are kept (a newer writer's extras survive a round trip), named ones are checked.

const str = (field: string) => z.string({ error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a string`) });
const id = (field: string) =>
  str(field)
    .min(1, { error: `${field} must not be empty` })
    .max(512, { error: `${field} is too long` });

export const Role = z.enum(['user', 'assistant', 'function_result', 'custom'], {
  error: 'role must be one of user, assistant, function_result, custom',
});
export type Role = z.infer<typeof Role>;
export const SessionStatus = z.enum(['idle', 'working', 'done', 'error'], { error: 'status must be one of idle, working, done, error' });
export type SessionStatus = z.infer<typeof SessionStatus>;

const TextBlock = z.looseObject({ type: z.literal('text'), text: str('text') });
const ImageBlock = z.looseObject({
  type: z.literal('image'),
  mime: str('mime'),
  data: str('data'),
  attachment_id: z.string().nullish(),
});
const FileBlock = z.looseObject({
  type: z.literal('file'),
  attachment_id: id('attachment_id'),
  name: str('name'),
  mime: str('mime'),
  size: z.number({ error: 'size must be a number' }).int().min(0),
});
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), text: str('text'), signature: z.string().nullish() });
const FunctionCallBlock = z.looseObject({
  type: z.literal('function_call'),
  id: id('id'),
  function_id: id('function_id'),
  arguments: z.unknown().optional(),
});

export type ContentBlock =
  | z.infer<typeof TextBlock>
  | z.infer<typeof ImageBlock>
  | z.infer<typeof FileBlock>
  | z.infer<typeof ThinkingBlock>
  | z.infer<typeof FunctionCallBlock>
  | { type: 'function_result'; function_call_id: string; content: ContentBlock[]; is_error?: boolean | null; [k: string]: unknown };

export const ContentBlock: z.ZodType<ContentBlock> = z.lazy(() =>
  z.discriminatedUnion(
    'type',
    [
      TextBlock,
      ImageBlock,
      FileBlock,
      ThinkingBlock,
      FunctionCallBlock,
      z.looseObject({
        type: z.literal('function_result'),
        function_call_id: id('function_call_id'),
        content: z.array(ContentBlock),
        is_error: z.boolean().nullish(),
      }),
    ],
    { error: 'type must be one of text, image, file, thinking, function_call, function_result' },
  ),
) as z.ZodType<ContentBlock>;

const Content = z.array(ContentBlock, { error: 'content must be an array of content blocks' });
const Timestamp = z.number({ error: 'timestamp must be a number (ms)' }).optional();

export const StopReason = z.enum(['end', 'length', 'function_call', 'aborted', 'error'], {
  error: 'stop_reason must be one of end, length, function_call, aborted, error',
});
export const ErrorKind = z.enum(['auth_expired', 'rate_limited', 'context_overflow', 'transient', 'permanent'], {
  error: 'error_kind must be one of auth_expired, rate_limited, context_overflow, transient, permanent',
});
export const Usage = z.looseObject({
  input: z.number().nullish(),
  output: z.number().nullish(),
  cache_read: z.number().nullish(),
  cache_write: z.number().nullish(),
  reasoning: z.number().nullish(),
  cost_usd: z.number().nullish(),
});

/** Assistant fields a streaming writer may change with `session::update-message` besides content. */
export const AssistantPatch = {
  stop_reason: StopReason.optional(),
  native_stop_reason: z.string().nullish(),
  error_message: z.string().nullish(),
  error_kind: ErrorKind.nullish(),
  warnings: z.array(z.string()).nullish(),
  usage: Usage.nullish(),
  model: z.string().optional(),
  provider: z.string().optional(),
};

/**
 * An AgentMessage. The reference requires `timestamp` (and `model`, `provider`, `stop_reason` on
 * assistant messages); we fill a missing timestamp with the store's clock and accept an assistant
 * message without the rest, so a streaming writer can append an empty one before it knows them.
 */
export const AgentMessage = z.discriminatedUnion(
  'role',
  [
    z.looseObject({ role: z.literal('user'), content: Content, timestamp: Timestamp }),
    z.looseObject({ role: z.literal('assistant'), content: Content, timestamp: Timestamp, ...AssistantPatch }),
    z.looseObject({
      role: z.literal('function_result'),
      function_call_id: id('function_call_id'),
      function_id: id('function_id'),
      content: Content,
      details: z.unknown().optional(),
      is_error: z.boolean({ error: 'is_error must be a boolean' }).default(false),
      timestamp: Timestamp,
    }),
    z.looseObject({
      role: z.literal('custom'),
      custom_type: id('custom_type'),
      content: Content,
      display: z.unknown().optional(),
      details: z.unknown().optional(),
      timestamp: Timestamp,
    }),
  ],
  { error: 'role must be one of user, assistant, function_result, custom' },
);
export type AgentMessage = z.infer<typeof AgentMessage> & { timestamp: number };

export const CustomPayload = z.object(
  { custom_type: id('custom_type'), data: z.unknown().optional() },
  { error: 'custom must be an object' },
);

export type Origin = Record<string, unknown>;
export const OriginField = z.record(z.string(), z.unknown(), { error: 'origin must be an object' }).nullish();
export const MetadataField = z.record(z.string(), z.unknown(), { error: 'metadata must be an object' });

/** A stored entry (what `session::get-message` returns). `seq` orders entries in append order. */
export type SessionEntry =
  | { kind: 'message'; id: string; parent_id: string | null; timestamp: number; revision: number; origin?: Origin; message: AgentMessage }
  | {
      kind: 'custom';
      id: string;
      parent_id: string | null;
      timestamp: number;
      revision: number;
      origin?: Origin;
      custom_type: string;
      data: unknown;
    };
export type StoredEntry = SessionEntry & { seq: number };

export interface AttachmentMeta {
  attachment_id: string;
  session_id: string;
  name: string;
  mime: string;
  size: number;
  sha256: string;
  created_at: number;
}

export interface SessionMeta {
  session_id: string;
  title: string;
  description: string;
  status: SessionStatus;
  status_reason?: string;
  metadata?: Record<string, unknown>;
  forked_from?: string;
  draft?: string;
  draft_attachments?: AttachmentMeta[];
  created_at: number;
  updated_at: number;
  message_count: number;
}

/**
 * What is persisted per session: the meta plus the active leaf, the next entry sequence number and
 * the bytes of its entries and attachments (the quotas' count, kept with every write so it survives
 * a restart without reading every transcript; absent in records written before the quotas).
 */
export type StoredSession = SessionMeta & { active_leaf: string | null; next_seq: number; content_bytes?: number };

export { id as idField, str as stringField };
