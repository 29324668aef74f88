import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { Model, Provider } from '../lib/chat/models.ts';
import { onChatEvent } from './chat-live.ts';
import { chatKeys } from './chat-sessions.ts';
import { callEngine, onEngineOpen } from './client.ts';
import { onLiveEvent } from './live.ts';

/**
 * The model catalogue (seed 2.9 "Model picker", console-worker.md §2.4–2.5): `router::models::list`
 * and `router::provider::list`, refreshed live by `router::models::changed` /
 * `router::provider::changed`; provider credentials written into the provider's slice of the
 * `llm-router` configuration entry (`configuration::schema`, `get`, `set`; the key is write-only).
 */

export const ROUTER_ENTRY = 'llm-router';

export function useModelCatalog() {
  const queryClient = useQueryClient();
  useEffect(() => {
    const refresh = () => {
      void queryClient.invalidateQueries({ queryKey: chatKeys.models() });
      void queryClient.invalidateQueries({ queryKey: chatKeys.providers() });
    };
    const off = onChatEvent((e) => {
      if (e.type === 'models-changed' || e.type === 'providers-changed') refresh();
    });
    const offOpen = onEngineOpen(refresh);
    // the router coming or going changes what the catalogue can be read from
    const offLive = onLiveEvent((topic) => topic === 'functions' && refresh());
    return () => {
      off();
      offOpen();
      offLive();
    };
  }, [queryClient]);
  const models = useQuery({
    queryKey: chatKeys.models(),
    queryFn: async () => (await callEngine<{ models: Model[] }>('router::models::list', {})).models,
    retry: 1,
  });
  const providers = useQuery({
    queryKey: chatKeys.providers(),
    queryFn: async () => (await callEngine<{ providers: Provider[] }>('router::provider::list', {})).providers,
    retry: 1,
  });
  return { models, providers };
}

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  writeOnly?: boolean;
  format?: string;
  enum?: unknown[];
  minimum?: number;
  default?: unknown;
}

export interface ProviderSliceForm {
  /** The provider's slice schema from the entry's composed schema. */
  schema: JsonSchema;
  /** The stored slice (secrets shown as `{set: true}`). */
  value: Record<string, unknown>;
  /** The whole stored value (a set replaces it, so the other providers are written back). */
  entry: Record<string, unknown>;
}

export function isSecret(schema: JsonSchema | undefined): boolean {
  return schema?.writeOnly === true || schema?.format === 'password';
}

export function useProviderSlice(provider: string | undefined) {
  return useQuery({
    queryKey: [...chatKeys.routerConfig(), provider ?? ''],
    enabled: !!provider,
    queryFn: async (): Promise<ProviderSliceForm> => {
      const [schema, stored] = await Promise.all([
        callEngine<{ schema: JsonSchema }>('configuration::schema', { id: ROUTER_ENTRY }),
        callEngine<{ value: Record<string, unknown> | null }>('configuration::get', { id: ROUTER_ENTRY }).catch(() => ({ value: null })),
      ]);
      const slice = schema.schema.properties?.providers?.properties?.[provider as string];
      if (!slice) throw new Error(`the ${ROUTER_ENTRY} configuration has no slice for provider ${provider} (is its worker connected?)`);
      const entry = stored.value && typeof stored.value === 'object' ? stored.value : {};
      const providers = (entry.providers ?? {}) as Record<string, Record<string, unknown>>;
      return { schema: slice, value: providers[provider as string] ?? {}, entry };
    },
    staleTime: 0,
  });
}

/** The stored `llm-router` value (secrets as `{set: true}`), or `{}` when nothing is stored yet. */
async function storedEntry(): Promise<Record<string, unknown>> {
  const current = await callEngine<{ value: Record<string, unknown> | null }>('configuration::get', { id: ROUTER_ENTRY }).catch(() => ({
    value: null,
  }));
  return current.value && typeof current.value === 'object' ? current.value : {};
}

/** Why a typed key cannot be saved (blank); the engine refuses the same (the entry's schema). */
export function apiKeyProblem(value: string): string | undefined {
  return value !== '' && value.trim() === '' ? 'API key (api_key) must not be empty or only spaces' : undefined;
}

/**
 * Write one provider's slice: the stored value with this slice changed. An empty secret field is
 * left out, so the stored key stays; a typed one replaces it. Other providers' secrets come back
 * as `{set: true}`, which keeps them.
 */
export function useSaveProviderSlice() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (input: { provider: string; form: ProviderSliceForm; values: Record<string, unknown> }) => {
      const entry = await storedEntry();
      const providers = { ...((entry.providers ?? {}) as Record<string, Record<string, unknown>>) };
      const slice: Record<string, unknown> = { ...(providers[input.provider] ?? {}) };
      for (const [key, value] of Object.entries(input.values)) {
        const field = input.form.schema.properties?.[key];
        if (isSecret(field) && (value === '' || value === undefined)) continue;
        if (value === '' || value === undefined) delete slice[key];
        else slice[key] = value;
      }
      providers[input.provider] = slice;
      return callEngine('configuration::set', { id: ROUTER_ENTRY, value: { ...entry, providers } });
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: chatKeys.routerConfig() });
      void queryClient.invalidateQueries({ queryKey: chatKeys.providers() });
    },
  });
}

/**
 * Remove a provider's stored key (`{"set": false}` drops a secret, engine configuration README):
 * the rest of the entry is written back as read. The provider is unconfigured afterwards unless
 * the router's environment has its variable, or its API URL is enough (a local server).
 */
export function useRemoveProviderKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (provider: string) => {
      const entry = await storedEntry();
      const providers = { ...((entry.providers ?? {}) as Record<string, Record<string, unknown>>) };
      providers[provider] = { ...(providers[provider] ?? {}), api_key: { set: false } };
      return callEngine('configuration::set', { id: ROUTER_ENTRY, value: { ...entry, providers } });
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: chatKeys.routerConfig() });
      void queryClient.invalidateQueries({ queryKey: chatKeys.providers() });
      void queryClient.invalidateQueries({ queryKey: chatKeys.models() });
    },
  });
}
