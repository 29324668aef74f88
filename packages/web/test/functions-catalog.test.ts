import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import {
  createFunctionCatalog,
  DEFAULT_FUNCTIONS_LIST_CACHE_MS,
  fetchCatalogEntries,
  parseCacheTtl,
  searchCatalog,
} from '../src/api/functions-catalog.ts';

// seed 2.9 "@-mentions" / seed 8: the functions list behind @-mentions is cached for
// VITE_FUNCTIONS_LIST_CACHE_MS (default 10 s), against a real engine.

describe('VITE_FUNCTIONS_LIST_CACHE_MS', () => {
  it('defaults to 10 s and falls back to it for invalid or negative values', () => {
    expect(DEFAULT_FUNCTIONS_LIST_CACHE_MS).toBe(10_000);
    expect(parseCacheTtl(undefined)).toBe(10_000);
    expect(parseCacheTtl('')).toBe(10_000);
    expect(parseCacheTtl('soon')).toBe(10_000);
    expect(parseCacheTtl('-5')).toBe(10_000);
    expect(parseCacheTtl('2500')).toBe(2500);
    expect(parseCacheTtl('0')).toBe(0);
    expect(parseCacheTtl(750)).toBe(750);
  });
});

describe('function catalog cache', () => {
  let engine: EngineProcess;
  let app: EngClient;
  let caller: EngClient;
  beforeAll(async () => {
    engine = await startEngine();
    app = connect(engine.busUrl, { name: 'catalog-app', tracing: false });
    app.registerFunction('orders::create', () => null, { description: 'Create an order' });
    await app.ready({ timeoutMs: 10_000 });
    caller = connect(engine.busUrl, { name: 'catalog-ui', registerWorker: false, tracing: false });
    await caller.ready({ timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await app?.close();
    await caller?.close();
    await engine?.stop();
  });

  it('serves the cached list within the TTL, refetches after it, and shares one fetch', async () => {
    let fetches = 0;
    // the catalog's own clock, moved by hand: a loaded machine cannot stretch 200 ms past the TTL
    let clock = Date.now();
    const catalog = createFunctionCatalog({
      ttlMs: 800,
      now: () => clock,
      fetch: () => {
        fetches++;
        return fetchCatalogEntries((id, payload) => caller.call(id, payload));
      },
    });
    const [a, b] = await Promise.all([catalog.get(), catalog.get()]);
    expect(fetches).toBe(1);
    expect(a).toBe(b);
    expect(a).toContainEqual({ function_id: 'orders::create', description: 'Create an order' });

    app.registerFunction('orders::refund', () => null);
    // the engine lists the new function before the cache is asked again
    await waitFor(async () => {
      const { functions } = await caller.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
      return functions.some((f) => f.function_id === 'orders::refund');
    }, 30_000);
    clock += 200;
    const cached = await catalog.get();
    expect(fetches).toBe(1);
    expect(cached.map((e) => e.function_id)).not.toContain('orders::refund');

    clock += 800;
    const fresh = await catalog.get();
    expect(fetches).toBe(2);
    expect(fresh.map((e) => e.function_id)).toContain('orders::refund');

    catalog.invalidate();
    await catalog.get();
    expect(fetches).toBe(3);
  });

  it('finds functions by fuzzy id and by description, best first', async () => {
    const entries = await fetchCatalogEntries((id, payload) => caller.call(id, payload));
    expect(searchCatalog(entries, 'ordcre')[0]?.function_id).toBe('orders::create');
    expect(searchCatalog(entries, 'an order').map((e) => e.function_id)).toEqual(['orders::create']);
    expect(searchCatalog(entries, 'zzzz')).toEqual([]);
    expect(searchCatalog(entries, '', 3)).toHaveLength(3);
  });
});
