import type { TriggerRecord, TriggerTypeRecord } from '@eng/protocol';
import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';
import { isUiFunction } from './ui-ids.ts';

export type { TriggerRecord, TriggerTypeRecord };

export const triggerKeys = {
  all: ['triggers'] as const,
  list: () => [...triggerKeys.all, 'list'] as const,
  types: () => [...triggerKeys.all, 'types'] as const,
};

/**
 * Bindings of engine-internal functions (`engine::…`) count as system triggers, and so do HTTP
 * routes under `_console/` (iii's console backend's API, issue 26 item 4), as the engine lists them.
 */
export function isSystemTrigger(t: Pick<TriggerRecord, 'function_id' | 'trigger_type'> & { config?: unknown }): boolean {
  if (t.function_id.startsWith('engine::') || t.trigger_type.startsWith('engine::')) return true;
  const path = t.trigger_type === 'http' ? (t.config as { api_path?: unknown } | null | undefined)?.api_path : undefined;
  return typeof path === 'string' && /^\/*_console(\/|$)/.test(path);
}

/**
 * Every trigger binding. The engine fires no trigger when bindings change, only when functions
 * do (api/live.ts invalidates this then); a modest 5 s poll covers bindings added to existing
 * functions.
 */
export function useTriggers() {
  return useQuery({
    queryKey: triggerKeys.list(),
    queryFn: async () => {
      const res = await callEngine<{ registered_triggers: TriggerRecord[] }>('engine::registered-triggers::list', {
        include_internal: true,
      });
      return res.registered_triggers.filter((t) => !isUiFunction(t.function_id));
    },
    refetchInterval: 5_000,
  });
}

export function useTriggerTypes() {
  return useQuery({
    queryKey: triggerKeys.types(),
    queryFn: async () => {
      const res = await callEngine<{ triggers: TriggerTypeRecord[] }>('engine::triggers::list', { include_internal: true });
      return res.triggers;
    },
    staleTime: 30_000,
  });
}
