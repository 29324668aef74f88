import { ObservabilityFunction } from '@eng/protocol';
import type { Core } from '../../core/core.ts';
import { functionKind } from '../../core/functions.ts';
import type { CallRecord, InvocationObserver, InvokeOutcome } from '../../core/invoker.ts';
import { parseTraceparent, setBaggageEntry } from './trace-context.ts';
import { type EngineTracer, setPair } from './tracer.ts';

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
  const templates = new PairTemplates();
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
      // the pairs every call of this function from this caller shares are made once (pairs are never mutated)
      const shared = templates.get(call.functionId, kind, workerId, workerName, call.callerWorkerId);
      // the attributes as the stored pairs (eng.invocation.id in its place), made here rather than
      // in a deferred closure: under tsx every closure assigned to a name costs a defineProperty
      const attributes = shared.pairs.slice();
      attributes.splice(shared.invocationAt, 0, ['eng.invocation.id', call.invocationId]);
      if (hints) for (const key in hints.attributes) setPair(attributes, key, hints.attributes[key] as string | number | boolean);
      const span = tracer.startSpan(hints?.name ?? shared.name, {
        traceparent: call.traceparent,
        kind: hints?.kind ?? 'server',
        pairs: attributes,
      });
      // an unsampled root still propagates (flags 00), so workers do not record it either
      call.traceparent = span.traceparent;
      if (span.sampled) call.openSpan = span;
    },
    afterDispatch(call: CallRecord, outcome: InvokeOutcome) {
      const span = call.openSpan;
      if (!span) return;
      call.openSpan = undefined;
      if (outcome.ok) span.end(ENDED_OK);
      else span.end({ error: outcome.error });
    },
  };
}

const ENDED_OK = Object.freeze({ status: 'ok' as const });

interface PairTemplate {
  name: string;
  kind: string;
  workerName: string | undefined;
  /** The call span's attributes but `eng.invocation.id`, in their order; it goes at `invocationAt`. */
  pairs: [string, string][];
  invocationAt: number;
}

/** Span names and constant attribute pairs per function, executor and caller (a few hundred at most). */
class PairTemplates {
  /** function id → executor → caller (no string built per lookup). */
  private readonly byFunction = new Map<string, Map<string, Map<string, PairTemplate>>>();
  private count = 0;

  get(
    functionId: string,
    kind: string,
    workerId: string | undefined,
    workerName: string | undefined,
    callerId: string | undefined,
  ): PairTemplate {
    let byWorker = this.byFunction.get(functionId);
    if (!byWorker) {
      // workers come and go: an unbounded set of ids would grow forever
      if (this.count >= 4096) {
        this.byFunction.clear();
        this.count = 0;
      }
      byWorker = new Map();
      this.byFunction.set(functionId, byWorker);
    }
    let byCaller = byWorker.get(workerId ?? '');
    if (!byCaller) {
      byCaller = new Map();
      byWorker.set(workerId ?? '', byCaller);
    }
    const found = byCaller.get(callerId ?? '');
    if (found && found.kind === kind && found.workerName === workerName) return found;
    const pairs: [string, string][] = [
      ['function_id', functionId],
      ['faas.invoked_name', functionId],
      ['eng.function.kind', kind],
    ];
    if (workerId !== undefined) pairs.push(['eng.worker.id', workerId]);
    if (workerName !== undefined) pairs.push(['eng.worker.name', workerName]);
    const invocationAt = pairs.length;
    if (callerId !== undefined) pairs.push(['eng.caller.worker_id', callerId]);
    const template = { name: `call ${functionId}`, kind, workerName, pairs, invocationAt };
    if (!found) this.count++;
    byCaller.set(callerId ?? '', template);
    return template;
  }
}
