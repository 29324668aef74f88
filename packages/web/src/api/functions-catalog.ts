import type { FunctionRecord } from '@eng/protocol';
import { useEffect, useState } from 'react';
import { matchScore } from '../lib/fuzzy.ts';
import { deniedToModels, fetchDeniedToModels } from './chat-gate.ts';
import { callEngine } from './client.ts';
import { isUiFunction } from './ui-ids.ts';

/**
 * The function catalog behind @-mentions (seed 2.9 "@-mentions", seed 8): every function on the
 * engine as `{function_id, description}`, fetched at most once per TTL. The TTL comes from
 * `VITE_FUNCTIONS_LIST_CACHE_MS` at build time; default 10 s, and an invalid or negative value
 * falls back to the default (console-worker spec §2.9).
 */
export const DEFAULT_FUNCTIONS_LIST_CACHE_MS = 10_000;

export interface CatalogEntry {
  function_id: string;
  description: string | null;
}

export function parseCacheTtl(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_FUNCTIONS_LIST_CACHE_MS;
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_FUNCTIONS_LIST_CACHE_MS;
}

export interface FunctionCatalog {
  /** The cached list, refetched when older than the TTL; concurrent callers share one fetch. */
  get(): Promise<CatalogEntry[]>;
  /** Drop the cached list (the next `get` fetches). */
  invalidate(): void;
  readonly ttlMs: number;
}

export function createFunctionCatalog(options: {
  ttlMs: number;
  fetch: () => Promise<CatalogEntry[]>;
  now?: () => number;
}): FunctionCatalog {
  const now = options.now ?? Date.now;
  let cached: { at: number; entries: CatalogEntry[] } | undefined;
  let inflight: Promise<CatalogEntry[]> | undefined;
  return {
    ttlMs: options.ttlMs,
    get() {
      if (cached && now() - cached.at < options.ttlMs) return Promise.resolve(cached.entries);
      inflight ??= options
        .fetch()
        .then((entries) => {
          cached = { at: now(), entries };
          return entries;
        })
        .finally(() => {
          inflight = undefined;
        });
      return inflight;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

/** Functions matching `query`, best first (fuzzy on the id, substring on the description). */
export function searchCatalog(entries: readonly CatalogEntry[], query: string, limit = 20): CatalogEntry[] {
  return entries
    .map((entry) => ({ entry, score: matchScore(query, entry.function_id, entry.description ?? '') }))
    .filter((x) => x.score >= 0)
    .sort((a, b) => b.score - a.score || a.entry.function_id.localeCompare(b.entry.function_id))
    .slice(0, limit)
    .map((x) => x.entry);
}

/** Every function but this UI's own hidden ones, as catalog entries. */
export async function fetchCatalogEntries(call: <T>(functionId: string, payload: unknown) => Promise<T>): Promise<CatalogEntry[]> {
  const { functions } = await call<{ functions: FunctionRecord[] }>('engine::functions::list', { include_internal: true });
  return functions
    .filter((f) => !isUiFunction(f.function_id))
    .map((f) => ({ function_id: f.function_id, description: f.description ?? null }));
}

/**
 * What the composer may offer: every function a model could be allowed to call, without the ones
 * the approval gate refuses in every mode (human-only, control plane, opaque wrappers, the gate
 * entry's deny rules; api/chat-gate.ts).
 */
export async function fetchMentionEntries(call: <T>(functionId: string, payload: unknown) => Promise<T>): Promise<CatalogEntry[]> {
  const [entries, denied] = await Promise.all([fetchCatalogEntries(call), fetchDeniedToModels(call)]);
  return entries.filter((entry) => !deniedToModels(entry.function_id, denied));
}

export const functionCatalog = createFunctionCatalog({
  ttlMs: parseCacheTtl(import.meta.env.VITE_FUNCTIONS_LIST_CACHE_MS),
  fetch: () => fetchMentionEntries(callEngine),
});

/** @-mention suggestions for the composer: the cached catalog (functions a model may call) searched with `query`. */
export function useFunctionMentions(query: string, limit = 20): { matches: CatalogEntry[]; loading: boolean } {
  const [state, setState] = useState<{ matches: CatalogEntry[]; loading: boolean }>({ matches: [], loading: true });
  useEffect(() => {
    let live = true;
    functionCatalog
      .get()
      .then((entries) => {
        if (live) setState({ matches: searchCatalog(entries, query, limit), loading: false });
      })
      .catch(() => {
        if (live) setState({ matches: [], loading: false });
      });
    return () => {
      live = false;
    };
  }, [query, limit]);
  return state;
}
