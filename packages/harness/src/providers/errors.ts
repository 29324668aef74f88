import type { ErrorKind } from '../router/types.ts';

// The shared failure taxonomy (spec §2.2 `error_kind`) from what the official clients throw:
// their APIError subclasses carry the HTTP status; connection failures carry none.

const CONTEXT_OVERFLOW = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long/i;

export function classifyError(err: unknown): { kind: ErrorKind; message: string } {
  const e = err as { status?: unknown; message?: unknown; name?: unknown; error?: { message?: unknown; error?: { message?: unknown } } };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const message = apiMessage(e) ?? (err instanceof Error ? err.message : String(err));
  if (status === undefined) {
    // APIConnectionError / timeouts / a stream cut mid-way: worth retrying later
    const name = typeof e?.name === 'string' ? e.name : '';
    if (/Connection|Timeout|ECONN|socket|network|terminated/i.test(`${name} ${message}`)) return { kind: 'transient', message };
    return { kind: 'permanent', message };
  }
  if (status === 401 || status === 403) return { kind: 'auth_expired', message: `${status} ${message}` };
  if (status === 429) return { kind: 'rate_limited', message: `${status} ${message}` };
  if ((status === 400 || status === 413) && CONTEXT_OVERFLOW.test(message))
    return { kind: 'context_overflow', message: `${status} ${message}` };
  if (status === 408 || status === 409 || status >= 500) return { kind: 'transient', message: `${status} ${message}` };
  return { kind: 'permanent', message: `${status} ${message}` };
}

/** The API's own error text when the client parsed one (`{error:{message}}`). */
function apiMessage(e: { error?: { message?: unknown; error?: { message?: unknown } } } | null | undefined): string | undefined {
  const inner = e?.error;
  if (!inner || typeof inner !== 'object') return undefined;
  if (typeof inner.message === 'string') return inner.message;
  if (inner.error && typeof inner.error.message === 'string') return inner.error.message;
  return undefined;
}

const KEY_LIKE = /\b(sk|sk-ant|sk-proj|key)-[A-Za-z0-9_-]{8,}\b/g;

/** Never let a key reach a log line, a span or a transcript: the key itself and key-like tokens go. */
export function redactSecret(text: string, secret: string | undefined): string {
  let out = text;
  if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.replace(KEY_LIKE, '[redacted]');
}
