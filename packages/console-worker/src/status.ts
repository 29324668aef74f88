import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import { z } from 'zod';

/**
 * `console::status` (seed 2.10, console-worker spec §1.5): the worker's runtime knobs for
 * liveness/readiness probes and `eng start`'s banner. `engine_url` never carries credentials.
 */
export const STATUS_FUNCTION_ID = 'console::status';

export interface ConsoleStatus {
  http_port: number;
  engine_url: string;
  version: string;
  /** Base URL that opens the UI. */
  url: string;
}

// the engine adds `_caller_worker_id` to object payloads of worker calls (engine-protocol §2.3)
const StatusInputSchema = z.object({ _caller_worker_id: z.string().optional() }).strict();

const REQUEST_FORMAT = { type: 'object', properties: {}, additionalProperties: false };
const RESPONSE_FORMAT = {
  type: 'object',
  properties: {
    http_port: { type: 'integer', description: 'port serving /, /assets/* and /ws' },
    engine_url: { type: 'string', description: 'engine WebSocket URL the worker and /ws use (credentials removed)' },
    version: { type: 'string' },
    url: { type: 'string', description: 'base URL that opens the UI' },
  },
  required: ['http_port', 'engine_url', 'version', 'url'],
};

export function statusHandler(status: () => ConsoleStatus) {
  return (input: unknown): ConsoleStatus => {
    const parsed = StatusInputSchema.safeParse(input ?? {});
    if (!parsed.success) {
      throw new EngError(ErrorCode.InvalidArguments, `${STATUS_FUNCTION_ID} takes an empty object: ${describeZodError(parsed.error)}`);
    }
    return status();
  };
}

export function registerStatus(client: EngClient, status: () => ConsoleStatus): void {
  client.registerFunction(STATUS_FUNCTION_ID, statusHandler(status), {
    description: "Return the console worker's runtime knobs: HTTP port, engine URL, version and the URL that opens the UI",
    // hidden from discovery like the reference (spec §1.5); probes call it by id
    metadata: { internal: true },
    request_format: REQUEST_FORMAT,
    response_format: RESPONSE_FORMAT,
  });
}
