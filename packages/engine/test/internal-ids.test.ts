/**
 * Issue 26 item 4: iii's console registers `engine::console::*` functions and `_console/*` HTTP
 * routes on the engine it connects to, and polls them every few seconds. In iii, ids under
 * `engine::` are internal, so that traffic stays out of the function, trigger and trace lists;
 * eng does the same: both are left out of `engine::functions::list`,
 * `engine::registered-triggers::list` and `engine::traces::list` unless `include_internal: true`.
 */
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

let engine: EngineProcess;
let console_: EngClient;
let admin: EngClient;
let base: string;

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: `  - name: eng-http
    config:
      port: {{HTTP_PORT}}
  - name: eng-observability
    config:
      exporter: memory
      sampling_ratio: 1.0
`,
  });
  base = (engine.addresses.http as { url: string }).url;
  admin = connect(engine.busUrl, { name: 'internal-admin' });
  await admin.ready({ timeoutMs: 10_000 });
  // what iii's console backend registers: an engine::console::* function behind a _console/* route
  console_ = connect(engine.busUrl, { name: 'iii-console-like' });
  await console_.ready({ timeoutMs: 10_000 });
  console_.registerFunction('engine::console::foo', async () => ({ status_code: 200, body: { ok: 'console' } }));
  console_.registerTrigger({ type: 'http', function_id: 'engine::console::foo', config: { api_path: '_console/x', http_method: 'GET' } });
  // a route under _console/ bound to a function of another name is the console's too
  console_.registerFunction('consolelike::bar', async () => ({ status_code: 200, body: { ok: 'bar' } }));
  console_.registerTrigger({ type: 'http', function_id: 'consolelike::bar', config: { api_path: '/_console/y', http_method: 'GET' } });
  // and an ordinary one, which stays listed
  console_.registerFunction('orders::list', async () => ({ status_code: 200, body: { ok: 'orders' } }));
  console_.registerTrigger({ type: 'http', function_id: 'orders::list', config: { api_path: 'orders', http_method: 'GET' } });
  await waitFor(async () => {
    const { triggers } = await admin.call<any>('engine::registered-triggers::list', { trigger_type: 'http', include_internal: true });
    return (triggers ?? []).length === 3 ? true : null;
  }, 15_000).catch(async () => {
    await waitFor(async () => {
      const r = await admin.call<any>('engine::registered-triggers::list', { trigger_type: 'http', include_internal: true });
      return (r.registered_triggers ?? r.triggers ?? []).length === 3;
    }, 15_000);
  });
}, 60_000);

afterAll(async () => {
  await console_?.close().catch(() => {});
  await admin?.close().catch(() => {});
  await engine?.stop();
});

const triggersOf = (r: any): Array<{ function_id: string; config: { api_path?: string } }> => r.registered_triggers ?? r.triggers ?? [];

describe("iii's console's registrations are internal", () => {
  it('engine::functions::list leaves engine::console::* out unless include_internal', async () => {
    const ids = async (input: object) =>
      (await admin.call<any>('engine::functions::list', input)).functions.map((f: { function_id: string }) => f.function_id);
    const listed = await ids({});
    expect(listed).toContain('orders::list');
    expect(listed).not.toContain('engine::console::foo');
    expect(await ids({ include_internal: true })).toContain('engine::console::foo');
  });

  it('engine::registered-triggers::list leaves _console/* routes out unless include_internal', async () => {
    const paths = async (input: object) =>
      triggersOf(await admin.call<any>('engine::registered-triggers::list', { trigger_type: 'http', ...input })).map(
        (t) => t.config.api_path,
      );
    expect(await paths({})).toEqual(['orders']);
    expect((await paths({ include_internal: true })).sort()).toEqual(['/_console/y', '_console/x', 'orders'].sort());
  });

  it("engine::traces::list leaves the console's polling out unless include_internal", async () => {
    for (const path of ['_console/x', '_console/y', 'orders']) {
      const res = await fetch(`${base}/${path}`);
      expect(res.status).toBe(200);
    }
    // the ordinary route's trace is there: the console's two are then recorded as well
    const traces = async (input: object) => {
      const r = await admin.call<any>('engine::traces::list', { limit: 100, ...input });
      return (r.spans ?? r.traces ?? []) as Array<{ name: string; trace_id: string }>;
    };
    const names = (list: Array<{ name: string }>) => list.map((t) => t.name).join(' | ');
    await waitFor(async () => (await traces({ include_internal: true })).length >= 3, 15_000);
    await waitFor(async () => /orders/.test(names(await traces({}))), 15_000);
    const shown = names(await traces({}));
    expect(shown).not.toMatch(/_console|engine::console/);
    expect(names(await traces({ include_internal: true }))).toMatch(/_console\/x|engine::console::foo/);
    expect(names(await traces({ include_internal: true }))).toMatch(/_console\/y|consolelike::bar/);
  });
});
