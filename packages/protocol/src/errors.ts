import { z } from 'zod';

/** spec: engine-protocol §2.4. The body every failed invocation carries. */
export const ErrorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  stacktrace: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * The one catalogue of error codes. Wire-visible codes keep the spellings the iii engine and
 * SDKs use (some lower-case, some upper-case) because workers match on them.
 */
export const ErrorCode = {
  // engine-protocol §2.4
  InvocationFailed: 'invocation_failed',
  FunctionNotFound: 'function_not_found',
  FunctionNotInvokable: 'function_not_invokable',
  InvocationStopped: 'invocation_stopped',
  // eng's cancelinvocation frame: the caller cancelled the call (not an iii code)
  InvocationCancelled: 'invocation_cancelled',
  InvocationError: 'invocation_error',
  ChannelSendFailed: 'channel_send_failed',
  Timeout: 'TIMEOUT',
  EnqueueError: 'enqueue_error',
  Forbidden: 'FORBIDDEN',
  DeserializationError: 'deserialization_error',
  SerializationError: 'serialization_error',
  TriggerRegistrationFailed: 'trigger_registration_failed',
  TriggerTypeNotFound: 'trigger_type_not_found',
  // a worker's registerfunction/registertriggertype of an engine built-in's id (registrationrejected frame)
  ReservedId: 'RESERVED_ID',
  // JSON nested deeper than the engine accepts (bus frames, HTTP and OTLP bodies), and over-long ids
  JsonTooDeep: 'JSON_TOO_DEEP',
  IdTooLong: 'ID_TOO_LONG',
  MemoryExporterNotEnabled: 'memory_exporter_not_enabled',
  NotFound: 'NOT_FOUND',
  InvalidArguments: 'INVALID_ARGUMENTS',
  // engine::functions::invoke: the function no longer matches the caller's expectation
  PreconditionFailed: 'PRECONDITION_FAILED',
  // built-in specific
  GetError: 'GET_ERROR',
  SetError: 'SET_ERROR',
  DeleteError: 'DELETE_ERROR',
  ListError: 'LIST_ERROR',
  ListGroupsError: 'LIST_GROUPS_ERROR',
  ValueTooLarge: 'VALUE_TOO_LARGE',
  JsonError: 'JSON_ERROR',
  TopicNotSet: 'topic_not_set',
  QueueNotSet: 'queue_not_set',
  // OTLP/HTTP receiver (observability): a body encoding other than JSON
  UnsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
  // HTTP module error bodies (engine-protocol §6.1)
  ConditionNotMet: 'CONDITION_NOT_MET',
  MiddlewareTimeout: 'MIDDLEWARE_TIMEOUT',
  PayloadTooLarge: 'PAYLOAD_TOO_LARGE',
  MethodNotAllowed: 'METHOD_NOT_ALLOWED',
  InternalError: 'INTERNAL_ERROR',
  // SDK side
  NotConnected: 'not_connected',
  UnknownError: 'UNKNOWN',
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** An error as a value: a machine `code` and a human `message`. */
export class EngError extends Error {
  readonly code: string;
  readonly stacktrace?: string;
  readonly details?: unknown;

  constructor(code: string, message: string, options?: { stacktrace?: string; details?: unknown }) {
    super(message);
    this.name = 'EngError';
    this.code = code;
    this.stacktrace = options?.stacktrace;
    this.details = options?.details;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.stacktrace) body.stacktrace = this.stacktrace;
    return body;
  }

  static from(value: unknown): EngError {
    if (value instanceof EngError) return value;
    const parsed = ErrorBodySchema.safeParse(value);
    if (parsed.success) {
      return new EngError(parsed.data.code, parsed.data.message, { stacktrace: parsed.data.stacktrace });
    }
    if (value instanceof Error) return new EngError(ErrorCode.UnknownError, value.message, { stacktrace: value.stack });
    return new EngError(ErrorCode.UnknownError, typeof value === 'string' ? value : JSON.stringify(value));
  }
}

/** Render a zod error as one readable line: `field.path: problem; other: problem`. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
