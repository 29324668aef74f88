import type { StoredSpan } from '@eng/protocol';

/**
 * Run history (issue 19 §13): a function's recent invocations read back from the trace store.
 *
 * A run is the span of one call of the function: the engine's `call <fn>` span (cron, queue
 * delivery, state trigger, direct calls without a trace context) and/or the worker's
 * `execute <fn>` span (engine-protocol §2.6). When both exist the worker's span is a child of the
 * engine's, and the pair is one run. Inputs and outputs come from the span events the SDKs record:
 * `eng.invocation.input` / `eng.invocation.output` (`eng.payload`, @eng/sdk, at most 2 KB) and
 * `iii.invocation.input` / `iii.invocation.output` (`iii.payload.json`, `iii.payload.truncated`,
 * `iii.payload.ok`, iii-sdk 0.22.1).
 */
export type RunStatus = 'ok' | 'error' | 'pending';

export interface Payload {
  /** The value, when the recorded text is complete JSON. */
  value?: unknown;
  /** The recorded text (possibly cut). */
  text: string;
  /** The SDK cut the payload: it cannot be rerun as is. */
  truncated: boolean;
}

export interface Run {
  traceId: string;
  /** The run's outermost span (the engine's `call`, else the worker's `execute`). */
  spanId: string;
  functionId: string;
  startMs: number;
  durationMs: number;
  status: RunStatus;
  error?: string;
  input?: Payload;
  output?: Payload;
  /** How the call arrived: `HTTP POST /orders`, `queue fulfilment (attempt 2)`, `cron`, `state`, `call` … */
  via: string;
  worker?: string;
}

const attr = (span: StoredSpan, key: string): string | undefined => span.attributes.find(([k]) => k === key)?.[1];
const eventAttr = (event: StoredSpan['events'][number], key: string) => event.attributes.find(([k]) => k === key)?.[1];

/** Reserved fields the engine adds to a call's data; a rerun must not send them back. */
const RESERVED = ['_caller_worker_id'];

export function parsePayload(text: string, truncatedFlag = false): Payload {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const key of RESERVED) delete (value as Record<string, unknown>)[key];
    }
    return { value, text, truncated: truncatedFlag };
  } catch {
    // @eng/sdk cuts at 2 KB and ends the text with "…": no longer JSON
    return { text, truncated: true };
  }
}

export function payloadOf(span: StoredSpan, which: 'input' | 'output'): Payload | undefined {
  for (const event of span.events) {
    if (event.name === `eng.invocation.${which}`) {
      const text = eventAttr(event, 'eng.payload');
      if (text !== undefined) return parsePayload(text);
    }
    if (event.name === `iii.invocation.${which}`) {
      const text = eventAttr(event, 'iii.payload.json');
      if (text !== undefined) return parsePayload(text, eventAttr(event, 'iii.payload.truncated') === 'true');
    }
  }
  return undefined;
}

/** Whether the output event says the call failed (iii records `{error}` with `iii.payload.ok: false`). */
function outputFailed(span: StoredSpan): boolean {
  return span.events.some((e) => e.name === 'iii.invocation.output' && eventAttr(e, 'iii.payload.ok') === 'false');
}

function errorOf(span: StoredSpan): string | undefined {
  const exception = span.events.find((e) => e.name === 'exception');
  const message = exception ? eventAttr(exception, 'exception.message') : undefined;
  return message ?? span.status_description ?? undefined;
}

function statusOf(span: StoredSpan): RunStatus {
  if (span.pending || span.end_time_unix_nano === 0) return 'pending';
  return span.status === 'error' || outputFailed(span) ? 'error' : 'ok';
}

function viaOf(span: StoredSpan): string {
  const queue = attr(span, 'messaging.destination.name');
  if (span.kind === 'consumer' && queue) {
    const attempt = attr(span, 'eng.queue.attempt');
    return `queue ${queue}${attempt && attempt !== '1' ? ` (attempt ${attempt})` : ''}`;
  }
  const trigger = attr(span, 'eng.trigger.type');
  if (trigger) return trigger;
  const method = attr(span, 'http.request.method');
  if (method) return `HTTP ${method} ${attr(span, 'http.route') ?? ''}`.trim();
  return 'call';
}

/** Spans that are not an execution of the function although they name it. */
function isRunSpan(span: StoredSpan, functionId: string): boolean {
  if (attr(span, 'function_id') !== functionId) return false;
  return isExecution(span);
}

/** A span that ran a function (an engine `call` or a worker `execute`), not one that only names its target. */
export function isExecution(span: StoredSpan): boolean {
  // the enqueue action's producer span names its target function
  return span.kind !== 'producer' && span.name !== 'enqueue_action';
}

/**
 * Runs of `functionId`, newest first, from `engine::traces::list` rows (`search_all_spans`,
 * filtered on the function id). A worker span under the engine's span of the same call joins it.
 */
export function runsFromSpans(spans: StoredSpan[], functionId: string): Run[] {
  const mine = spans.filter((s) => isRunSpan(s, functionId));
  const byId = new Map(mine.map((s) => [s.span_id, s]));
  const inner = new Map<string, StoredSpan>();
  for (const s of mine) {
    const parent = s.parent_span_id ? byId.get(s.parent_span_id) : undefined;
    if (parent && parent.trace_id === s.trace_id) inner.set(parent.span_id, s);
  }
  const runs: Run[] = [];
  for (const s of mine) {
    const parent = s.parent_span_id ? byId.get(s.parent_span_id) : undefined;
    if (parent && parent.trace_id === s.trace_id) continue; // joined to its engine span
    const worker = inner.get(s.span_id);
    const both = worker ? [s, worker] : [s];
    const status: RunStatus = both.some((x) => statusOf(x) === 'pending')
      ? 'pending'
      : both.some((x) => statusOf(x) === 'error')
        ? 'error'
        : 'ok';
    const startNs = s.start_time_unix_nano;
    const endNs = s.end_time_unix_nano || worker?.end_time_unix_nano || 0;
    const output = worker ? payloadOf(worker, 'output') : payloadOf(s, 'output');
    runs.push({
      traceId: s.trace_id,
      spanId: s.span_id,
      functionId,
      startMs: startNs / 1e6,
      durationMs: endNs ? Math.max(0, (endNs - startNs) / 1e6) : Math.max(0, Date.now() - startNs / 1e6),
      status,
      error: status === 'error' ? ((worker ? errorOf(worker) : undefined) ?? errorOf(s) ?? (output?.text || undefined)) : undefined,
      input: (worker ? payloadOf(worker, 'input') : undefined) ?? payloadOf(s, 'input'),
      output: status === 'error' && outputFailed(worker ?? s) ? undefined : output,
      via: viaOf(s),
      worker: attr(s, 'eng.worker.name') ?? worker?.service_name ?? s.service_name,
    });
  }
  return runs.sort((a, b) => b.startMs - a.startMs);
}

/** The JSON a rerun starts from: the recorded input, else `{}`. */
export function rerunText(input: Payload | undefined): string {
  if (!input) return '{}';
  if (input.truncated || input.value === undefined) return input.text;
  return JSON.stringify(input.value, null, 2);
}
