import { describeZodError, EngError } from '@eng/protocol';
import type { z } from 'zod';

/**
 * Errors of the chat workers: `code` is `<domain>/<snake>` (`session/not_found`) and the message
 * starts with the code, as the reference workers answer (console-worker.md §2.2), so a caller
 * matching on either the code or the message text finds it.
 */
export function domainError(domain: string, code: string, message: string): EngError {
  const full = `${domain}/${code}`;
  return new EngError(full, `${full}: ${message}`);
}

/**
 * Parse a function's input with a zod schema; a mismatch is `<domain>/invalid_request` naming the
 * field (`session/invalid_request: session::append: message.content.0.text: …`). A null or absent
 * payload is read as `{}` so the error names the missing field instead of the whole payload.
 */
export function parseRequest<T>(domain: string, functionId: string, schema: z.ZodType<T>, input: unknown, code = 'invalid_request'): T {
  const parsed = schema.safeParse(input === null || input === undefined ? {} : input);
  if (!parsed.success) throw domainError(domain, code, `${functionId}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** An error from a call to another worker or the engine, as `<domain>/storage` (retryable). */
export function storageError(domain: string, what: string, err: unknown): EngError {
  const e = EngError.from(err);
  return domainError(domain, 'storage', `${what} failed: ${e.code}: ${e.message}`);
}
