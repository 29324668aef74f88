import { ObservabilityFunction } from '@eng/protocol';
import type { Core } from '../../core/core.ts';
import { functionKind } from '../../core/functions.ts';
import type { CallRecord, InvocationObserver, InvokeOutcome } from '../../core/invoker.ts';
import { parseTraceparent, setBaggageEntry } from './trace-context.ts';
import type { EngineSpan, EngineTracer } from './tracer.ts';

// spec: engine-protocol §2.6 — which dispatched calls get an engine `call <function_id>` span.

const OBSERVABILITY_FUNCTIONS = new Set<string>(Object.values(ObservabilityFunction));
const isEngineBuiltin = (id: string) => id.startsWith('engine::') && !id.startsWith('engine::queue::');

/**
 * The engine's span per dispatched call, 0.22.1 semantics with one addition:
 * - a call routed to a worker WITH a traceparent gets no engine span: the worker's
 *   `execute <fn>` span is the canonical one and the caller's context is forwarded unchanged;
 * - a call WITHOUT a traceparent (HTTP-less triggers: cron, queue, state, …) gets a root span, so
 *   every invocation is traceable; its context is what the executor receives;
 * - in-process module functions (`state::*`, `stream::*`, …) get a span only under an incoming
 *   traceparent; `engine::*` built-ins only with `trace_builtins` (III_OTEL_TRACE_BUILTINS): @eng/sdk
 *   callers always send a context, and the console's polling must not fill the span store;
 * - observability functions never do, so reading traces does not create traces;
 * - a call dispatched with span hints always gets one, with the hints' name, kind and attributes:
 *   each delivery attempt of a message is a `consumer` span carrying `eng.message.id`; a cron or
 *   state trigger's call hangs under its `cron_trigger` / `state_triggers` span; the enqueue
 *   action is an `enqueue_action` producer span (see core/invoker.ts).
 */
export function callSpanObserver(core: Core, tracer: EngineTracer, options: { traceBuiltins: boolean }): InvocationObserver {
  const open = new WeakMap<CallRecord, EngineSpan>();
  return {
    beforeDispatch(call: CallRecord) {
      // spec §2.6 [0.22.1]: the baggage key naming the function follows the call
      if (call.baggage?.includes('iii.function.id=')) call.baggage = setBaggageEntry(call.baggage, 'iii.function.id', call.functionId);
      if (OBSERVABILITY_FUNCTIONS.has(call.functionId)) return;
      const parent = parseTraceparent(call.traceparent);
      if (parent && !parent.sampled) return; // the caller decided not to record this trace
      const routedToWorker = call.executorWorkerId !== null;
      const hints = call.span;
      if (!hints) {
        if (routedToWorker && parent) return;
        if (!routedToWorker && !options.traceBuiltins && (!parent || isEngineBuiltin(call.functionId))) return;
      }
      const entry = core.functions.get(call.functionId);

      // functions registered with `metadata.internal: true` (e.g. the console UI's live hooks) are system spans too
      const kind = entry ? (entry.metadata?.internal === true ? 'internal' : functionKind(entry)) : 'user';
      const workerId = call.executorWorkerId ?? entry?.moduleName ?? undefined;
      const workerName = call.executorWorkerId ? core.workers.nameOf(call.executorWorkerId) : undefined;
      const span = tracer.startSpan(hints?.name ?? `call ${call.functionId}`, {
        traceparent: call.traceparent,
        kind: hints?.kind ?? 'server',
        // built when the span is stored, after the caller has its reply
        attributes: () => ({
          function_id: call.functionId,
          'faas.invoked_name': call.functionId,
          'eng.function.kind': kind,
          'eng.worker.id': workerId,
          'eng.worker.name': workerName,
          'eng.invocation.id': call.invocationId,
          'eng.caller.worker_id': call.callerWorkerId,
          ...hints?.attributes,
        }),
      });
      // an unsampled root still propagates (flags 00), so workers do not record it either
      call.traceparent = span.traceparent;
      if (span.sampled) open.set(call, span);
    },
    afterDispatch(call: CallRecord, outcome: InvokeOutcome) {
      const span = open.get(call);
      if (!span) return;
      open.delete(call);
      if (outcome.ok) span.end({ status: 'ok' });
      else span.end({ error: outcome.error });
    },
  };
}
