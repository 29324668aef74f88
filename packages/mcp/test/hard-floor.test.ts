/**
 * Issue 12 item 10: the hard floor covers the iii spellings (`iii::`, `iii.`) on every path, under
 * `--expose-all`: tools/list, tools/call (fast and full path, and the `__` fallback), resources and
 * completions, and the built-ins that take a function id. Each iii id is refused exactly like its
 * `eng` twin: the engine's own aliases (iii::queue::redrive, …) and functions a worker registers.
 */
import { connect, type EngClient } from '@eng/sdk';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { type StdioMcp, startMcpEngine, stdioMcp, textOf, toolNames } from './helpers.ts';

let engine: EngineProcess;
let worker: EngClient;
let mcp: StdioMcp;
let iiiTriggerId: string;
/** Function ids whose handler ran: none of the floored ones may ever appear. */
const ran: string[] = [];

// [iii spelling, eng twin]; the first four are the engine's own queue functions and their aliases
const TWINS: Array<[string, string]> = [
  ['iii__queue__redrive', 'eng__queue__redrive'],
  ['iii__queue__redrive_message', 'eng__queue__redrive_message'],
  ['iii__queue__discard_message', 'eng__queue__discard_message'],
  ['iii__durable__publish', 'eng__durable__publish'],
  ['iii__custom__thing', 'eng__custom__thing'],
  ['iii.custom', 'eng.custom'],
  // ids that literally start with the `__` spelling of a floored namespace are floored too (the check is on the real id)
  ['iii__literal', 'eng__literal'],
];
const FLOOR_TEXT = /^Function '(.+)' is in the eng engine internal namespace and is not exposed as an MCP tool$/;

/** The same refusal with the namespace swapped: `'iii::x'` ↔ `'eng::x'`, `'iii.x'` ↔ `'eng.x'`. */
function expectTwinRefusal(iiiText: string, engText: string, label: string): void {
  expect(iiiText, label).toMatch(FLOOR_TEXT);
  expect(engText, label).toMatch(FLOOR_TEXT);
  expect(iiiText, label).toBe(engText.replace("Function 'eng", "Function 'iii"));
}

async function readJson(uri: string): Promise<any> {
  const res = await mcp.client.readResource({ uri });
  return JSON.parse((res.contents[0] as { text: string }).text);
}

async function notFound(uri: string): Promise<void> {
  const err = await mcp.client.readResource({ uri }).catch((e: unknown) => e);
  expect(err, uri).toBeInstanceOf(McpError);
  expect((err as McpError).code, uri).toBe(-32002);
}

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = connect(engine.busUrl, { name: 'floor-worker', logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const opted = { metadata: { 'mcp.expose': true } };
  for (const id of ['iii::custom::thing', 'eng::custom::thing', 'iii.custom', 'eng.custom', 'iii__literal', 'eng__literal']) {
    worker.registerFunction(
      id,
      () => {
        ran.push(id);
        return 'floor breached';
      },
      opted,
    );
  }
  // not opted in, outside the floor: --expose-all must list and run it (the test can see a listing)
  worker.registerFunction('floorcheck::plain', () => 'plain ran');
  iiiTriggerId = worker.registerTrigger({
    type: 'http',
    function_id: 'iii::custom::thing',
    config: { api_path: 'floor/iii', http_method: 'POST' },
  }).id;
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    const ids = functions.map((f) => f.function_id);
    return ids.includes('floorcheck::plain') && ids.includes('iii::queue::redrive') && ids.includes('eng__literal');
  }, 15_000);
  mcp = await stdioMcp(engine, ['--expose-all']);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await worker?.close();
  await engine?.stop();
});

describe('hard floor: iii spellings under --expose-all', () => {
  it('tools/list shows no iii (nor eng) tool, while a plain function is listed', async () => {
    const names = await toolNames(mcp.client);
    expect(names).toContain('floorcheck__plain');
    expect(names.filter((n) => n.startsWith('iii'))).toEqual([]);
    expect(names.filter((n) => n.startsWith('eng__') || n.startsWith('eng.'))).toEqual([]);
  });

  it('tools/call refuses every iii tool with the same text as its eng twin, and nothing runs', async () => {
    expect(textOf(await mcp.client.callTool({ name: 'floorcheck__plain', arguments: {} }))).toBe('plain ran');
    for (const [iii, eng] of TWINS) {
      const a = await mcp.client.callTool({ name: iii, arguments: { queue: 'default', message_id: 'm1' } });
      const b = await mcp.client.callTool({ name: eng, arguments: { queue: 'default', message_id: 'm1' } });
      expect(a.isError, iii).toBe(true);
      expect(b.isError, eng).toBe(true);
      expectTwinRefusal(textOf(a), textOf(b), iii);
    }
    // the id spelled with `::` as a tool name takes the same path
    const direct = await mcp.client.callTool({ name: 'iii::queue::redrive', arguments: {} });
    expect(textOf(direct)).toMatch(FLOOR_TEXT);
    expect(ran).toEqual([]);
  });

  it('resources and completions never name an iii function or its trigger', async () => {
    const functions = (await readJson('eng://functions')) as Array<{ function_id: string }>;
    expect(functions.map((f) => f.function_id)).toContain('floorcheck::plain');
    expect(functions.filter((f) => /^(iii|eng)(::|\.|__)/.test(f.function_id))).toEqual([]);
    const workers = (await readJson('eng://workers')) as Array<{ functions: string[] }>;
    for (const w of workers) expect(w.functions.filter((id) => id.startsWith('iii'))).toEqual([]);
    const triggers = (await readJson('eng://triggers')) as Array<{ id: string; function_id: string }>;
    expect(triggers.filter((t) => t.function_id.startsWith('iii'))).toEqual([]);
    for (const uri of [
      'eng://function/iii::custom::thing',
      'eng://function/iii__custom__thing',
      'eng://function/iii%3A%3Aqueue%3A%3Aredrive',
      'eng://function/iii.custom',
      'eng://function/iii__literal',
      `eng://trigger/${iiiTriggerId}`,
    ]) {
      await notFound(uri);
    }
    const completion = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'eng://function/{id}' },
      argument: { name: 'id', value: '' },
    });
    expect(completion.completion.values).toContain('floorcheck::plain');
    expect(completion.completion.values.filter((v) => v.startsWith('iii'))).toEqual([]);
  });

  it('built-ins taking a function id refuse iii ids (either spelling) like their eng twins', async () => {
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await mcp.client.callTool({ name, arguments: args });
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      return textOf(result);
    };
    for (const [iii, eng] of [
      ['iii::queue::redrive', 'eng::queue::redrive'],
      ['iii__queue__discard_message', 'eng__queue__discard_message'],
      ['iii::durable::publish', 'eng::durable::publish'],
      ['iii::custom::thing', 'eng::custom::thing'],
      ['iii.custom', 'eng.custom'],
      ['iii__literal', 'eng__literal'],
    ]) {
      for (const tool of ['eng_trigger_void', 'eng_trigger_enqueue']) {
        expectTwinRefusal(
          await call(tool, { function_id: iii, payload: {} }),
          await call(tool, { function_id: eng, payload: {} }),
          `${tool} ${iii}`,
        );
      }
      const config = { api_path: 'floor/never', http_method: 'POST' };
      expectTwinRefusal(
        await call('eng_trigger_register', { trigger_type: 'http', function_id: iii, config }),
        await call('eng_trigger_register', { trigger_type: 'http', function_id: eng, config }),
        `eng_trigger_register ${iii}`,
      );
    }
    const code = 'async () => ({ ok: true })';
    expectTwinRefusal(
      await call('eng_worker_register', { language: 'node', code, function_name: 'iii::made::here' }),
      await call('eng_worker_register', { language: 'node', code, function_name: 'eng::made::here' }),
      'eng_worker_register',
    );
    // let a void call that slipped through reach its handler before looking
    await new Promise((r) => setTimeout(r, 300));
    expect(ran).toEqual([]);
  });
});
