/**
 * eng-mcp's own notification functions (`mcp::<id>::functions_changed` / `workers_changed`) are
 * plumbing: every worker or console tab that comes and goes calls them, and their traces must not
 * flood the trace list or count as the application's functions. They are system: hidden by default,
 * shown with the System toggle (include_internal).
 */
import { connect } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { type StdioMcp, startMcpEngine, stdioMcp } from './helpers.ts';

let engine: EngineProcess;
let mcp: StdioMcp;
let client: RawClient;

beforeAll(async () => {
  engine = await startMcpEngine('  - name: eng-observability\n    config:\n      logs_console_output: false\n');
  mcp = await stdioMcp(engine);
  client = await RawClient.worker(engine.busUrl);
});
afterAll(async () => {
  await client?.terminate();
  await mcp?.close();
  await engine?.stop();
});

interface Span {
  name: string;
  attributes: Record<string, unknown>;
}
const rootNames = async (input: Record<string, unknown>) =>
  (await client.result<{ spans: Span[] }>('engine::traces::list', { limit: 500, ...input })).spans.map((s) => s.name);

describe("eng-mcp's notification functions are system plumbing", () => {
  it('workers coming and going leave no mcp:: traces in the default list; System shows them', async () => {
    for (let i = 0; i < 3; i++) {
      const w = connect(engine.busUrl, { name: `short-lived-${i}` });
      w.registerFunction(`plumbing::f${i}`, async () => null);
      await w.ready();
      await w.close();
    }
    // the notifications did happen: with System on, their spans are there
    const all = await waitFor(async () => {
      const names = await rootNames({ include_internal: true });
      return names.some((n) => /mcp::.*::(workers|functions)_changed/.test(n)) ? names : null;
    }, 15_000);
    expect(all.filter((n) => /mcp::.*_changed/.test(n)).length).toBeGreaterThan(0);
    expect((await rootNames({})).filter((n) => n.includes('mcp::'))).toEqual([]);
    // nor do they count in the invocation figures behind Busiest functions and the rate chart
    const { engine_metrics } = await client.result<{ engine_metrics: { invocations: { by_function: Record<string, number> } } }>(
      'engine::metrics::list',
      {},
    );
    expect(Object.keys(engine_metrics.invocations.by_function).filter((id) => id.startsWith('mcp::'))).toEqual([]);
  });

  it('the functions are listed as internal, so the console counts them as system functions', async () => {
    const { functions } = await client.result<{ functions: Array<{ function_id: string; metadata?: Record<string, unknown> }> }>(
      'engine::functions::list',
      { include_internal: true },
    );
    const plumbing = functions.filter((f) => /^mcp::.*::(functions|workers)_changed$/.test(f.function_id));
    expect(plumbing).toHaveLength(2);
    for (const f of plumbing) expect(f.metadata?.internal).toBe(true);
  });
});
