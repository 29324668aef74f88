import type { EngClient, TriggerRequest } from '@eng/sdk';
import { type EngineView, GUARDED_INVOKE } from './engine-view.ts';
import { type ExposurePolicy, type FunctionRow, inHardFloor, isExposed } from './exposure.ts';
import { checkGate, type GateOutcome } from './gate.ts';

// spec: seed §4.3 rule 4 — calling an exposed function, the one way tools, resources and prompts
// share. On an eng engine the look-up and the call are one round trip: the row comes from the
// mirror and the re-check happens inside the engine, atomically with the dispatch
// (GUARDED_INVOKE with the metadata the policy requires). Otherwise (or when the engine refused
// because the mirror was stale) the full path: a fresh gate check, then the call.

/** A guarded call that did not run: the engine refused it before dispatch. */
export const NOT_RUN = Symbol('not run');

export interface InvokeOptions {
  /** Invocation metadata the function receives (`ctx.metadata`). */
  metadata?: Record<string, unknown>;
  /**
   * Cancels the call when it aborts (a client's notifications/cancelled, a closed stream,
   * tasks/cancel): the engine ends the invocation and the function's `ctx.signal` aborts (@eng/sdk);
   * an iii-sdk function runs to its end and its result is dropped.
   */
  signal?: AbortSignal;
}

export interface InvokerDeps {
  client: EngClient;
  view: EngineView;
  policy: ExposurePolicy;
  invocationTimeoutMs: number;
  /** Told when the mirrored function rows turned out stale (the guarded call refused). */
  onStaleMirror?: () => void;
}

export class Invoker {
  constructor(private readonly deps: InvokerDeps) {}

  /** The mirrored row of an exposed function, when the one-round-trip path applies to it. */
  fastRow(functionId: string): FunctionRow | undefined {
    const { view, policy } = this.deps;
    if (!view.connected || !view.guardedInvokeReady()) return undefined;
    const row = view.mirrored(functionId);
    if (!row || inHardFloor(functionId) || !isExposed(row, policy)) return undefined;
    return row;
  }

  /** The full path's check: floor, a fresh look at the engine, exposure. */
  gate(functionId: string): Promise<GateOutcome> {
    return checkGate(this.deps.view, this.deps.policy, functionId);
  }

  /** Call through GUARDED_INVOKE; NOT_RUN when the engine refused before running anything. */
  async guarded(functionId: string, payload: unknown, options: InvokeOptions = {}): Promise<unknown> {
    const { policy, view } = this.deps;
    // `internal` absent (or null) at dispatch: a function re-registered as internal since the
    // listing is refused by the engine, and the full path then answers with the floor's text
    const expected: Record<string, unknown> = { internal: null };
    if (!policy.exposeAll) expected['mcp.expose'] = true;
    if (policy.tier !== undefined) expected['mcp.tier'] = policy.tier;
    try {
      return await this.trigger(GUARDED_INVOKE, { function_id: functionId, payload, expect: { metadata: expected } }, options);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
      const text = typeof message === 'string' ? message : '';
      if (code === 'function_not_found' && text.includes(GUARDED_INVOKE)) {
        view.guardedInvokeMissing();
        return NOT_RUN;
      }
      // the engine's own refusals name the function first; a failure of the function itself does not
      const ours = text.startsWith(`Function ${functionId}:`) || text === `Function ${functionId} not found`;
      if (ours && (code === 'PRECONDITION_FAILED' || code === 'NOT_FOUND')) {
        this.deps.onStaleMirror?.();
        return NOT_RUN;
      }
      throw err;
    }
  }

  /** Call a function the gate approved. */
  direct(functionId: string, payload: unknown, options: InvokeOptions = {}): Promise<unknown> {
    return this.trigger(functionId, payload, options);
  }

  private trigger(functionId: string, payload: unknown, options: InvokeOptions): Promise<unknown> {
    const request: TriggerRequest = { function_id: functionId, payload, timeoutMs: this.deps.invocationTimeoutMs };
    if (options.metadata) request.metadata = options.metadata;
    if (options.signal) request.signal = options.signal;
    return this.deps.client.trigger(request);
  }
}
