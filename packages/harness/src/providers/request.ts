import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import { MAX_ANSWER_BYTES, MIN_ANSWER_BYTES } from '../router/settings.ts';
import type { ProviderStreamRequest } from '../router/types.ts';

// The generation request as the router forwards it (and `router::chat` accepts it): validated once,
// so a provider adapter only ever sees well-formed messages.

const text = z.object({ type: z.literal('text'), text: z.string() });
const image = z.object({ type: z.literal('image'), mime: z.string().min(1), data: z.string() });
const inputBlock = z.discriminatedUnion('type', [text, image]);

const generated = z.discriminatedUnion('type', [
  text,
  z.object({ type: z.literal('thinking'), text: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal('tool_call'), id: z.string().min(1), name: z.string().min(1), arguments: z.unknown() }),
]);

export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.array(inputBlock) }),
  z.object({ role: z.literal('assistant'), content: z.array(generated) }),
  z.object({
    role: z.literal('tool_result'),
    tool_call_id: z.string().min(1),
    tool_name: z.string().min(1),
    content: z.array(inputBlock),
    is_error: z.boolean().default(false),
  }),
]);

export const ToolSpecSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'tool name must be 1-64 letters, digits, _ or -' }),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});

export const GenerationFields = {
  messages: z.array(ChatMessageSchema).min(1, { error: 'messages must not be empty' }),
  system: z.string().optional(),
  tools: z.array(ToolSpecSchema).optional(),
  max_output_tokens: z.number().int().positive().optional(),
  thinking_level: z.enum(['minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
  provider_options: z.record(z.string(), z.unknown()).optional(),
};

const StreamRequestSchema = z.object({
  request_id: z.string().min(1),
  model: z.string().min(1),
  /** The router's cap on this answer (its settings); absent: the default. */
  max_answer_bytes: z.number().int().min(MIN_ANSWER_BYTES).max(MAX_ANSWER_BYTES).optional(),
  ...GenerationFields,
});

export function parseStreamRequest(providerId: string, input: unknown): ProviderStreamRequest {
  const parsed = StreamRequestSchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new EngError(ErrorCode.DeserializationError, `provider::${providerId}::stream: ${describeZodError(parsed.error)}`);
  }
  return parsed.data as ProviderStreamRequest;
}
