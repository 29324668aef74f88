import { z } from 'zod';
import { ErrorBodySchema } from './errors.ts';

// spec: engine-protocol §2.2 — every frame is a JSON object discriminated by `type`;
// unknown fields are ignored (zod's default strip), missing optional fields mean null.

/** UUIDs as the Rust `uuid` crate accepts them: 8-4-4-4-12 hex, any version. */
export const UuidSchema = z.guid();

const AnyJson = z.unknown();
const JsonObject = z.record(z.string(), z.unknown());

export const TraceFields = {
  traceparent: z.string().nullish(),
  baggage: z.string().nullish(),
};

export const WorkerRegisteredSchema = z.object({
  type: z.literal('workerregistered'),
  worker_id: UuidSchema,
  reattach_token: z.string().optional(),
});

export const ReattachSchema = z.object({
  type: z.literal('reattach'),
  previous_worker_id: z.string(),
  reattach_token: z.string(),
});

/** spec: §3.4 — HTTP-invoked ("external") function reference. */
export const HttpInvocationRefSchema = z.object({
  url: z.string(),
  method: z.string().optional(),
  timeout_ms: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  auth: z
    .union([
      z.object({ type: z.literal('hmac'), secret_key: z.string() }),
      z.object({ type: z.literal('bearer'), token_key: z.string() }),
      z.object({ type: z.literal('api_key'), header: z.string(), value_key: z.string() }),
    ])
    .optional(),
});

export const RegisterFunctionSchema = z.object({
  type: z.literal('registerfunction'),
  id: z.string().min(1),
  description: z.string().nullish(),
  request_format: AnyJson.optional(),
  response_format: AnyJson.optional(),
  metadata: JsonObject.nullish(),
  invocation: HttpInvocationRefSchema.nullish(),
});

export const UnregisterFunctionSchema = z.object({
  type: z.literal('unregisterfunction'),
  id: z.string().min(1),
});

export const RegisterTriggerTypeSchema = z.object({
  type: z.literal('registertriggertype'),
  id: z.string().min(1),
  description: z.string().nullish(),
  trigger_request_format: AnyJson.optional(),
  call_request_format: AnyJson.optional(),
});

export const UnregisterTriggerTypeSchema = z.object({
  type: z.literal('unregistertriggertype'),
  id: z.string().min(1),
});

export const RegisterTriggerSchema = z.object({
  type: z.literal('registertrigger'),
  id: z.string().min(1),
  trigger_type: z.string().min(1),
  function_id: z.string().min(1),
  config: AnyJson.optional(),
  metadata: JsonObject.nullish(),
});

export const TriggerRegistrationResultSchema = z.object({
  type: z.literal('triggerregistrationresult'),
  id: z.string(),
  trigger_type: z.string().nullish(),
  function_id: z.string().nullish(),
  error: ErrorBodySchema.nullish(),
});

export const UnregisterTriggerSchema = z.object({
  type: z.literal('unregistertrigger'),
  id: z.string().min(1),
  trigger_type: z.string().nullish(),
});

export const TriggerActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('void') }),
  z.object({ type: z.literal('enqueue'), queue: z.string() }),
]);
export type TriggerAction = z.infer<typeof TriggerActionSchema>;

export const InvokeFunctionSchema = z.object({
  type: z.literal('invokefunction'),
  invocation_id: UuidSchema.nullish(),
  function_id: z.string().min(1),
  // spec §2.2 recommendation: a missing `data` is treated as null instead of dropping the frame
  data: AnyJson.optional(),
  action: TriggerActionSchema.nullish(),
  metadata: AnyJson.optional(),
  ...TraceFields,
});

export const InvocationResultSchema = z.object({
  type: z.literal('invocationresult'),
  invocation_id: UuidSchema,
  function_id: z.string().nullish(),
  result: AnyJson.optional(),
  error: ErrorBodySchema.nullish(),
  ...TraceFields,
});

/**
 * eng's own frame, not iii's (iii has no way to recall a call): both directions. A caller sends it
 * for an invocation it made and still waits on; the engine ends that call at once (the caller gets
 * `invocation_cancelled`) and passes the frame on to the executing worker, naming the invocation it
 * sent there. An iii engine drops it as an unknown type and the call runs on (§2.2); iii SDKs
 * ignore it, so their functions run to their end and their result is discarded.
 */
export const CancelInvocationSchema = z.object({
  type: z.literal('cancelinvocation'),
  invocation_id: UuidSchema,
  function_id: z.string().nullish(),
  reason: z.string().max(1024).nullish(),
});

export const RegisterServiceSchema = z.object({
  type: z.literal('registerservice'),
  id: z.string().min(1),
  name: z.string().nullish(),
  description: z.string().nullish(),
  parent_service_id: z.string().nullish(),
});

export const PingSchema = z.object({ type: z.literal('ping') });
export const PongSchema = z.object({ type: z.literal('pong') });

/**
 * Engine→worker: a registration was refused and not stored (§2.3.13, HEAD's frame; eng sends it for
 * ids reserved to engine built-ins). `function_id` or `trigger_type` names what was refused.
 */
export const RegistrationRejectedSchema = z.object({
  type: z.literal('registrationrejected'),
  code: z.string(),
  message: z.string().nullish(),
  function_id: z.string().nullish(),
  trigger_type: z.string().nullish(),
  namespace: z.string().nullish(),
  owner_worker_id: z.string().nullish(),
});

/** Sent once by the engine when a connection fails its session step (§2.1). */
export const HandshakeErrorSchema = z.object({ type: z.literal('error'), error: ErrorBodySchema });

export const MessageSchema = z.discriminatedUnion('type', [
  WorkerRegisteredSchema,
  ReattachSchema,
  RegisterFunctionSchema,
  UnregisterFunctionSchema,
  RegisterTriggerTypeSchema,
  UnregisterTriggerTypeSchema,
  RegisterTriggerSchema,
  TriggerRegistrationResultSchema,
  UnregisterTriggerSchema,
  InvokeFunctionSchema,
  InvocationResultSchema,
  CancelInvocationSchema,
  RegisterServiceSchema,
  PingSchema,
  PongSchema,
  HandshakeErrorSchema,
  RegistrationRejectedSchema,
]);

export type WorkerRegistered = z.infer<typeof WorkerRegisteredSchema>;
export type Reattach = z.infer<typeof ReattachSchema>;
export type HttpInvocationRef = z.infer<typeof HttpInvocationRefSchema>;
export type RegisterFunction = z.infer<typeof RegisterFunctionSchema>;
export type UnregisterFunction = z.infer<typeof UnregisterFunctionSchema>;
export type RegisterTriggerType = z.infer<typeof RegisterTriggerTypeSchema>;
export type UnregisterTriggerType = z.infer<typeof UnregisterTriggerTypeSchema>;
export type RegisterTrigger = z.infer<typeof RegisterTriggerSchema>;
export type TriggerRegistrationResult = z.infer<typeof TriggerRegistrationResultSchema>;
export type UnregisterTrigger = z.infer<typeof UnregisterTriggerSchema>;
export type InvokeFunction = z.infer<typeof InvokeFunctionSchema>;
export type InvocationResult = z.infer<typeof InvocationResultSchema>;
export type CancelInvocation = z.infer<typeof CancelInvocationSchema>;
export type RegisterService = z.infer<typeof RegisterServiceSchema>;
export type RegistrationRejected = z.infer<typeof RegistrationRejectedSchema>;
export type Message = z.infer<typeof MessageSchema>;
export type MessageType = Message['type'];

export const MESSAGE_TYPES: readonly MessageType[] = MessageSchema.options.map((o) => o.shape.type.value);
