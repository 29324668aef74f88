/**
 * §11 item 16 for either iii-sdk version: introspection results have the shapes that version's
 * types and EngineFunctions constants expect (§4.1, §9 "introspection conflicts").
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { RawClient } from '../../../../test/raw-client.ts';
import { type CompatEnv, ready, recordingProvider } from './compat-env.ts';

/** Key sets each SDK version's listing types promise (spec §4.1 record shapes). */
const WORKER_KEYS = {
  // WorkerInfo
  '0.11.6': [
    'id',
    'name',
    'runtime',
    'version',
    'os',
    'ip_address',
    'status',
    'connected_at_ms',
    'function_count',
    'functions',
    'active_invocations',
    'isolation',
  ],
  // WorkerSummary
  '0.22.1': [
    'name',
    'description',
    'version',
    'id',
    'runtime',
    'os',
    'status',
    'function_count',
    'connected_at_ms',
    'active_invocations',
    'isolation',
    'ip_address',
  ],
} as const;

export function runIntrospectionChecks(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;
  const list = async <T = any>(functionId: string, payload: unknown = {}): Promise<T> => env.call<T>(functionId, payload);

  describe(`iii-sdk ${v} §11.16 introspection shapes`, () => {
    const requestFormat = { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] };
    const responseFormat = { type: 'object', properties: { id: { type: 'string' } } };

    it('engine::functions::list returns the fields this SDK reads, with metadata["mcp.expose"] intact', async () => {
      env.a.registerFunction('intro::create-order', async () => ({ id: 'o1' }), {
        description: 'Create an order',
        request_format: requestFormat,
        response_format: responseFormat,
        metadata: { 'mcp.expose': true, owner: 'team-a' },
      });
      env.a.registerFunction('intro::bare', async () => null);
      await ready(env.a);
      const { functions } = await list<{ functions: any[] }>('engine::functions::list');
      const created = functions.find((f) => f.function_id === 'intro::create-order');
      const bare = functions.find((f) => f.function_id === 'intro::bare');
      // the flat dotted key survives (§3.2); the mcp worker filters on it
      expect(created.metadata).toEqual({ 'mcp.expose': true, owner: 'team-a' });
      expect(created.metadata['mcp.expose']).toBe(true);
      expect(created.description).toBe('Create an order');
      if (v === '0.11.6') {
        // FunctionInfo: every key present, null when unset (§4.1)
        expect(created).toMatchObject({ request_format: requestFormat, response_format: responseFormat });
        expect(bare).toMatchObject({
          function_id: 'intro::bare',
          description: null,
          request_format: null,
          response_format: null,
          metadata: null,
        });
      } else {
        // FunctionSummary: worker_name from the owner's registered name
        expect(created.worker_name).toBe(`compat-a-${v}`);
        expect(bare).toMatchObject({ function_id: 'intro::bare', worker_name: `compat-a-${v}` });
      }
      // sorted by id, engine::* hidden unless asked for
      const ids = functions.map((f) => f.function_id);
      expect(ids).toEqual([...ids].sort());
      expect(ids.some((id) => id.startsWith('engine::'))).toBe(false);
      const all = await list<{ functions: any[] }>('engine::functions::list', { include_internal: true });
      expect(all.functions.map((f) => f.function_id)).toContain('engine::functions::list');
    });

    it('engine::workers::list returns the fields of this SDK’s worker record', async () => {
      env.a.registerFunction('intro::listed', async () => null);
      await ready(env.a);
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      const a = workers.find((w) => w.id === env.aId);
      expect(Object.keys(a)).toEqual(expect.arrayContaining([...WORKER_KEYS[v]]));
      expect(a).toMatchObject({ status: 'connected', runtime: 'node', os: expect.any(String), connected_at_ms: expect.any(Number) });
      expect(a.functions).toContain('intro::listed');
      expect(a.function_count).toBe(a.functions.length);
      if (v === '0.22.1') expect(a.description).toBe('worker A of the compat suite');
      // in-process modules are listed as workers too (§4.1)
      expect(workers.find((w) => w.name === 'eng-engine-functions')).toMatchObject({
        runtime: 'engine',
        status: 'available',
        isolation: 'in-process',
      });
    });

    it('honours the listing filters this SDK version sends', async () => {
      if (v === '0.11.6') {
        // WorkerInfo lookup by id, which also reveals a connection that never registered a pid
        const raw = await RawClient.worker(env.engine.busUrl);
        try {
          expect((await list<{ workers: any[] }>('engine::workers::list')).workers.some((w) => w.id === raw.workerId)).toBe(false);
          const { workers } = await list<{ workers: any[] }>('engine::workers::list', { worker_id: raw.workerId });
          expect(workers).toMatchObject([{ id: raw.workerId, pid: null }]);
          const byA = await list<{ workers: any[] }>('engine::workers::list', { worker_id: env.aId });
          expect(byA.workers.map((w) => w.id)).toEqual([env.aId]);
        } finally {
          await raw.terminate();
        }
      } else {
        env.a.registerFunction('filter::alpha', async () => null, { description: 'Reconcile the ledger' });
        env.a.registerFunction('filter::beta', async () => null);
        await ready(env.a);
        const byRuntime = await list<{ workers: any[] }>('engine::workers::list', { runtime: 'node' });
        expect(byRuntime.workers.length).toBeGreaterThanOrEqual(2);
        expect(byRuntime.workers.every((w) => w.runtime === 'node')).toBe(true);
        const bySearch = await list<{ workers: any[] }>('engine::workers::list', { search: 'COMPAT-A' });
        expect(bySearch.workers.map((w) => w.id)).toEqual([env.aId]);
        const byPrefix = await list<{ functions: any[] }>('engine::functions::list', { prefix: 'filter::' });
        expect(byPrefix.functions.map((f) => f.function_id)).toEqual(['filter::alpha', 'filter::beta']);
        const byWorker = await list<{ functions: any[] }>('engine::functions::list', { worker: `compat-a-${v}`, prefix: 'filter::' });
        expect(byWorker.functions).toHaveLength(2);
        const other = await list<{ functions: any[] }>('engine::functions::list', { worker: `compat-b-${v}`, prefix: 'filter::' });
        expect(other.functions).toEqual([]);
        // search matches ids and descriptions
        const byDescription = await list<{ functions: any[] }>('engine::functions::list', { search: 'the ledger' });
        expect(byDescription.functions.map((f) => f.function_id)).toEqual(['filter::alpha']);
      }
    });

    it(`engine::triggers::list answers a ${v} caller with trigger ${v === '0.11.6' ? 'instances' : 'types'}`, async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.intro', description: 'Introspection trigger type' }, provider.handler);
      env.b.registerFunction('intro::bound', async () => null);
      env.b.registerTrigger({ type: 'compat.intro', function_id: 'intro::bound', config: { path: '/x' } });
      await ready(env.b);
      const binding = await waitFor(() => provider.registered[0]);
      const { triggers } = await list<{ triggers: any[] }>('engine::triggers::list');
      if (v === '0.11.6') {
        // TriggerInfo instances (0.11.6 EngineFunctions.LIST_TRIGGERS)
        expect(triggers.find((t) => t.id === binding.id)).toMatchObject({
          trigger_type: 'compat.intro',
          function_id: 'intro::bound',
          config: { path: '/x' },
        });
      } else {
        // trigger TYPES (0.22.1 EngineFunctions.LIST_TRIGGERS), engine::* hidden
        // exactly the 0.22.1 TriggerTypeSummary: schemas and counts live on engine::triggers::info
        expect(triggers.find((t) => t.id === 'compat.intro')).toEqual({
          id: 'compat.intro',
          worker_name: `compat-a-${v}`,
          description: 'Introspection trigger type',
        });
        for (const t of triggers) expect(Object.keys(t).every((k) => ['id', 'worker_name', 'description'].includes(k))).toBe(true);
        expect(triggers.some((t) => t.id === binding.id)).toBe(false);
        expect(triggers.some((t) => String(t.id).startsWith('engine::'))).toBe(false);
      }
    });

    it('gives the same engine::triggers::list shape to a call made right at startup, before the SDK said its version', async () => {
      env.b.registerFunction('intro::startup', async () => null);
      env.b.registerTrigger({ type: 'compat.startup', function_id: 'intro::startup', config: {} });
      await ready(env.b);
      // called before the socket opens: the SDK sends it ahead of its engine::workers::register (§2.7)
      const fresh = env.connect({ name: 'startup-lister' });
      const { triggers } = await fresh.trigger({ function_id: 'engine::triggers::list', payload: {} });
      if (v === '0.11.6') expect(triggers.some((t: { function_id?: string }) => t.function_id === 'intro::startup')).toBe(true);
      else expect(triggers.every((t: { function_id?: string }) => t.function_id === undefined)).toBe(true);
      await fresh.shutdown();
    });

    it('engine::trigger-types::list returns TriggerTypeInfo records', async () => {
      const { trigger_types } = await list<{ trigger_types: any[] }>('engine::trigger-types::list');
      expect(trigger_types.find((t) => t.id === 'compat.intro')).toMatchObject({
        id: 'compat.intro',
        description: 'Introspection trigger type',
      });
      expect(trigger_types.some((t) => String(t.id).startsWith('engine::'))).toBe(false);
    });
  });
}
