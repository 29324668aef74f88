import type { FunctionDetail, FunctionRecord } from '@eng/protocol';
import { useMutation, useQuery } from '@tanstack/react-query';
import { callEngine, connectionState, EngineCallError } from './client.ts';
import { isUiFunction } from './ui-ids.ts';

export type { FunctionDetail, FunctionRecord };

export const functionKeys = {
  all: ['functions'] as const,
  list: () => [...functionKeys.all, 'list'] as const,
  detail: (id: string) => [...functionKeys.all, 'detail', id] as const,
};

/** System functions: the engine's own modules (`kind: internal`) and anything marked `metadata.internal`. */
export function isSystemFunction(fn: Pick<FunctionRecord, 'kind' | 'metadata' | 'function_id'>): boolean {
  return fn.kind === 'internal' || fn.metadata?.internal === true || fn.function_id.startsWith('engine::');
}

/**
 * Every function, system ones included (the page filters). Refreshed by the
 * `engine::functions-available` trigger (api/live.ts), so no polling.
 */
export function useFunctions() {
  return useQuery({
    queryKey: functionKeys.list(),
    queryFn: async () => {
      const res = await callEngine<{ functions: FunctionRecord[] }>('engine::functions::list', { include_internal: true });
      return res.functions.filter((f) => !isUiFunction(f.function_id));
    },
    staleTime: 60_000,
  });
}

export function useFunctionDetail(functionId: string | undefined) {
  return useQuery({
    queryKey: functionKeys.detail(functionId ?? ''),
    queryFn: () => callEngine<FunctionDetail>('engine::functions::info', { function_id: functionId }),
    enabled: !!functionId,
  });
}

export interface InvokeOutcome {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
  durationMs: number;
  /** Trace of this call in the engine's trace store, when observability records one. */
  traceId?: string;
  startedAt: number;
}

/** Invoke a function from the console (seed 4.1 op 1); errors are values, shown inline. */
export function useInvokeFunction() {
  return useMutation({
    mutationFn: async ({ functionId, input, timeoutMs }: { functionId: string; input: unknown; timeoutMs?: number }) => {
      const startedAt = Date.now();
      const t0 = performance.now();
      try {
        const result = await callEngine(functionId, input, { timeoutMs: timeoutMs ?? 30_000 });
        const durationMs = performance.now() - t0;
        return { ok: true, result, durationMs, startedAt, traceId: await findInvocationTrace(functionId, startedAt) } as InvokeOutcome;
      } catch (err) {
        const durationMs = performance.now() - t0;
        const e = err instanceof EngineCallError ? err : new EngineCallError('error', String(err));
        return {
          ok: false,
          error: { code: e.code, message: e.message },
          durationMs,
          startedAt,
          traceId: await findInvocationTrace(functionId, startedAt),
        } as InvokeOutcome;
      }
    },
  });
}

/**
 * The engine opens a root span `call <fn>` for a call without a traceparent and tags it with the
 * caller's worker id (engine-protocol §2.6), so this tab's call is the newest such span. Absent
 * when the observability module keeps no traces.
 */
async function findInvocationTrace(functionId: string, since: number): Promise<string | undefined> {
  const workerId = connectionState().workerId;
  if (!workerId) return undefined;
  try {
    const res = await callEngine<{ spans: Array<{ trace_id: string }> }>(
      'engine::traces::list',
      {
        start_time: since - 1000,
        attributes: [
          ['eng.caller.worker_id', workerId],
          ['function_id', functionId],
        ],
        search_all_spans: true,
        sort_by: 'start_time',
        sort_order: 'desc',
        limit: 1,
        include_internal: true,
      },
      { timeoutMs: 3000 },
    );
    return res.spans?.[0]?.trace_id;
  } catch {
    return undefined;
  }
}
