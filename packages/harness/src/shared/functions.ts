import { EngError } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import { z } from 'zod';
import { domainError, parseRequest } from './errors.ts';

export interface HandlerOptions<T> {
  description: string;
  schema: z.ZodType<T>;
  metadata?: Record<string, unknown>;
  /** Error code (after `<domain>/`) of a malformed call; default `invalid_request`. */
  invalidCode?: string;
}

/**
 * Register a function whose input is checked with `schema` (a mismatch is `<domain>/invalid_request`
 * naming the field) and whose unexpected failures become `<domain>/internal` instead of a bare
 * exception text. The schema is published as the function's request format.
 */
export function registerHandler<T>(
  client: EngClient,
  domain: string,
  id: string,
  options: HandlerOptions<T>,
  handler: (input: T) => unknown | Promise<unknown>,
): void {
  client.registerFunction(
    id,
    async (raw: unknown) => {
      const input = parseRequest(domain, id, options.schema, raw, options.invalidCode);
      try {
        return await handler(input);
      } catch (err) {
        if (err instanceof EngError || (err as { name?: string }).name === 'EngError') throw err;
        throw domainError(domain, 'internal', `${id}: ${(err as Error).message ?? String(err)}`);
      }
    },
    { description: options.description, request_format: requestFormat(options.schema), metadata: options.metadata },
  );
}

function requestFormat(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  } catch {
    return undefined;
  }
}
