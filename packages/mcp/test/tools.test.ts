/**
 * eng-mcp tools over stdio with the MCP SDK client: the exposure gate (seed §4.3 rules 1-5), the
 * tools/call sequence and every error text of seed §7, schemas and annotations (mcp.md §10),
 * stale-list re-checks, list_changed, progress, logging, cancellation and pagination.
 */
import { connect, type EngClient } from '@eng/sdk';
import { LoggingMessageNotificationSchema, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { BUILTINS, demoWorker, type StdioMcp, sleep, startMcpEngine, stdioMcp, textOf, toolNames } from './helpers.ts';

let engine: EngineProcess;
let worker: EngClient;
let mcp: StdioMcp;
const extra: EngClient[] = [];
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function otherWorker(name: string): EngClient {
  const w = connect(engine.busUrl, { name, logger: quiet });
  extra.push(w);
  return w;
}

/** Traces holding a call span of `functionId` (every call eng-mcp makes starts its own trace). */
async function tracesCalling(functionId: string): Promise<number> {
  const page = await worker.call<{ total: number }>('engine::traces::list', {
    name: `call ${functionId}`,
    search_all_spans: true,
    include_internal: true,
    limit: 1,
  });
  return page.total;
}

beforeAll(async () => {
  // engine built-ins traced too: the tests below count the engine calls eng-mcp makes per tool call
  engine = await startMcpEngine('  - name: eng-observability\n    config:\n      trace_builtins: true\n      logs_console_output: false\n');
  worker = await demoWorker(engine);
  mcp = await stdioMcp(engine);
});
afterAll(async () => {
  await mcp?.close();
  for (const w of extra) await w.close();
  await worker?.close();
  await engine?.stop();
});

describe('tools/list', () => {
  it('lists the built-ins first, then only functions with the flat boolean "mcp.expose": true, mangled', async () => {
    const names = await toolNames(mcp.client);
    expect(names.slice(0, 6)).toEqual(BUILTINS);
    expect(names).toContain('demo__echo');
    expect(names).toContain('demo__gold');
    expect(names).toContain('demo__silver');
    // not opted in, opted in with a string, or with the nested form
    expect(names).not.toContain('demo__hidden');
    expect(names).not.toContain('demo__string_flag');
    expect(names).not.toContain('demo__nested_flag');
    // the hard floor, although these opted in; and the engine's own functions
    for (const floored of ['state__sneaky', 'stream__sneaky', 'eng__sneaky', 'eng.sneaky', 'mcp__sneaky', 'a2a__sneaky']) {
      expect(names).not.toContain(floored);
    }
    expect(names.some((n) => n.startsWith('engine__') || n.startsWith('mcp__'))).toBe(false);
  });

  it('gives every tool a description and an object inputSchema; title, annotations and outputSchema come from metadata', async () => {
    const { tools } = await mcp.client.listTools();
    for (const tool of tools) {
      expect(typeof tool.description).toBe('string');
      expect(tool.description?.length).toBeGreaterThan(0);
      expect(tool.inputSchema.type).toBe('object');
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.demo__no_description?.description).toBe('Function demo::no_description');
    expect(byName.demo__echo?.inputSchema).toEqual({ type: 'object', properties: { message: { type: 'string' } } });
    expect(byName.demo__typed).toMatchObject({
      title: 'Doubler',
      description: 'Double a number',
      annotations: { title: 'Doubler', readOnlyHint: true, idempotentHint: true },
      outputSchema: { type: 'object', properties: { doubled: { type: 'number' } }, required: ['doubled'] },
    });
    expect(byName.demo__echo?.annotations).toBeUndefined();
    // a string input is wrapped, since MCP arguments are always an object
    expect(byName.demo__scalar?.inputSchema).toEqual({
      type: 'object',
      properties: { input: { type: 'string' } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(byName.eng_trigger_void?.inputSchema).toMatchObject({
      type: 'object',
      properties: { function_id: { type: 'string' }, payload: { type: 'object' } },
      required: ['function_id', 'payload'],
    });
  });

  it('pages long lists with an opaque cursor and refuses a forged one with -32602', async () => {
    const bulk = otherWorker('bulk');
    for (let i = 0; i < 60; i++)
      bulk.registerFunction(`bulk::f${String(i).padStart(2, '0')}`, () => i, { metadata: { 'mcp.expose': true } });
    await bulk.ready();
    await waitFor(async () => (await toolNames(mcp.client)).includes('bulk__f59'));
    const first = await mcp.client.listTools();
    expect(first.tools).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const all = await toolNames(mcp.client);
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((n) => n.startsWith('bulk__'))).toHaveLength(60);
    const forged = Buffer.from(JSON.stringify({ k: 'prompts', o: 0 })).toString('base64url');
    for (const cursor of [forged, 'not-a-cursor']) {
      const err = await mcp.client.listTools({ cursor }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32602);
    }
    await bulk.close();
  });
});

describe('tools/call', () => {
  it('reverses the mangling, invokes with the arguments as payload and wraps the result as one text item', async () => {
    const result = await mcp.client.callTool({ name: 'demo__echo', arguments: { message: 'hi' } });
    expect(result.isError).toBe(false);
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(textOf(result)).echoed).toMatchObject({ message: 'hi' });
    const text = await mcp.client.callTool({ name: 'demo__text', arguments: {} });
    expect(textOf(text)).toBe('plain text');
    const scalar = await mcp.client.callTool({ name: 'demo__scalar', arguments: { input: 'abc' } });
    expect(textOf(scalar)).toBe('got abc');
  });

  it('returns structuredContent matching the advertised outputSchema', async () => {
    const result = await mcp.client.callTool({ name: 'demo__typed', arguments: { n: 21 } });
    expect(result).toMatchObject({ isError: false, structuredContent: { doubled: 42 } });
    expect(JSON.parse(textOf(result))).toEqual({ doubled: 42 });
    // a function that breaks its own response_format is an error, not a client-side crash
    const liar = await mcp.client.callTool({ name: 'demo__liar', arguments: {} });
    expect(liar.isError).toBe(true);
    expect(textOf(liar)).toContain('does not match its response_format');
  });

  it('rejects the hard floor with the internal-namespace text, even for opted-in functions', async () => {
    for (const name of ['state__sneaky', 'engine__functions__list', 'mcp__sneaky', 'a2a__sneaky', 'eng__sneaky', 'eng.sneaky']) {
      const result = await mcp.client.callTool({ name, arguments: {} });
      expect(result.isError, name).toBe(true);
      expect(textOf(result)).toMatch(/^Function '.+' is in the eng engine internal namespace and is not exposed as an MCP tool$/);
    }
  });

  it('rejects functions without the opt-in with the mcp.expose text', async () => {
    for (const name of ['demo__hidden', 'demo__string_flag', 'demo__nested_flag']) {
      const result = await mcp.client.callTool({ name, arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `Function '${name.replace('__', '::')}' is not exposed via mcp.expose metadata (or does not match the active --tier filter)`,
      );
    }
  });

  it('answers an unknown tool with JSON-RPC -32602', async () => {
    const err = await mcp.client.callTool({ name: 'nope__missing', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toContain('Unknown tool: nope__missing');
  });

  it('reports function failures and argument errors as isError results', async () => {
    const failed = await mcp.client.callTool({ name: 'demo__fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('Error: remote error (invocation_failed): boom');
    const wrongType = await mcp.client.callTool({ name: 'demo__typed', arguments: { n: 'three' } });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/^Invalid arguments for tool 'demo__typed': .*n.*number/);
    const missing = await mcp.client.callTool({ name: 'demo__typed', arguments: {} });
    expect(textOf(missing)).toMatch(/required property 'n'/);
  });

  it('re-checks exposure at call time: a function that lost its opt-in after the list is refused', async () => {
    const flip = otherWorker('flip');
    const exposed = flip.registerFunction('flip::fn', () => 'ran', { metadata: { 'mcp.expose': true } });
    await flip.ready();
    await waitFor(async () => (await toolNames(mcp.client)).includes('flip__fn'));
    // same id, same worker, now without the opt-in: the client's list is stale
    exposed.unregister();
    flip.registerFunction('flip::fn', () => 'ran anyway', { metadata: { owner: 'flip' } });
    await waitFor(async () => {
      const { functions } = await flip.call<{ functions: Array<{ function_id: string; metadata?: unknown }> }>(
        'engine::functions::list',
        {},
      );
      return functions.find((f) => f.function_id === 'flip::fn' && !(f.metadata as Record<string, unknown> | undefined)?.['mcp.expose']);
    });
    const result = await mcp.client.callTool({ name: 'flip__fn', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Function 'flip::fn' is not exposed via mcp.expose metadata");
    await flip.close();
  });

  it('on an eng engine the re-check runs inside the engine, in the same round trip as the call', async () => {
    await mcp.client.callTool({ name: 'demo__echo', arguments: { warm: true } });
    await sleep(100);
    const before = { info: await tracesCalling('engine::functions::info'), guarded: await tracesCalling('engine::functions::invoke') };
    for (let i = 0; i < 3; i++) {
      const result = await mcp.client.callTool({ name: 'demo__echo', arguments: { i } });
      expect(JSON.parse(textOf(result)).echoed.i).toBe(i);
    }
    await waitFor(async () => (await tracesCalling('engine::functions::invoke')) - before.guarded === 3);
    expect(await tracesCalling('engine::functions::info')).toBe(before.info);
  });

  it('a call racing a lost opt-in is refused by the engine, runs nothing, and gets the not-exposed text', async () => {
    const racer = otherWorker('racer');
    let ran = 0;
    const exposed = racer.registerFunction('race::fn', () => 'ran', { metadata: { 'mcp.expose': true } });
    await racer.ready();
    await waitFor(async () => (await toolNames(mcp.client)).includes('race__fn'));
    await sleep(300); // let the engine's change event and eng-mcp's refresh for the registration pass
    const before = { info: await tracesCalling('engine::functions::info'), guarded: await tracesCalling('engine::functions::invoke') };
    exposed.unregister();
    racer.registerFunction(
      'race::fn',
      () => {
        ran++;
        return 'ran anyway';
      },
      { metadata: {} },
    );
    // one round trip on the racer's own connection: the engine has the new registration after it
    await racer.call('engine::functions::info', { function_id: 'race::fn' });
    const result = await mcp.client.callTool({ name: 'race__fn', arguments: {} });
    expect(textOf(result)).toContain("Function 'race::fn' is not exposed via mcp.expose metadata");
    expect(ran).toBe(0);
    // eng-mcp still had the opted-in row: the guarded call was tried and refused, then the full
    // path looked afresh (the racer's own info call is the other one)
    await waitFor(async () => (await tracesCalling('engine::functions::info')) - before.info === 2);
    expect((await tracesCalling('engine::functions::invoke')) - before.guarded).toBe(1);
    await racer.close();
  });

  it('sends progress notifications when the client asks, and log messages at or above its level', async () => {
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const logs: unknown[] = [];
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    await mcp.client.setLoggingLevel('warning');
    const result = await mcp.client.callTool({ name: 'demo__progress', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(JSON.parse(textOf(result))).toEqual({ steps: 3, sawToken: true });
    expect(progress).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
    await waitFor(() => logs.length > 0);
    expect(logs[0]).toEqual({ level: 'warning', data: { done: 3 }, logger: 'demo' });

    // above the level: filtered
    await mcp.client.setLoggingLevel('error');
    logs.length = 0;
    await mcp.client.callTool({ name: 'demo__progress', arguments: { steps: 1 } }, undefined, { onprogress: () => {} });
    await sleep(200);
    expect(logs).toEqual([]);
    const bad = await mcp.client.setLoggingLevel('loud' as never).catch((e: unknown) => e);
    expect((bad as McpError).code).toBe(-32602);
    expect((bad as McpError).message).toContain('Unknown log level: loud');
  });

  it('stops waiting for a cancelled call and keeps serving', async () => {
    const controller = new AbortController();
    const pending = mcp.client.callTool({ name: 'demo__slow', arguments: { ms: 3000 } }, undefined, { signal: controller.signal });
    await sleep(200);
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    expect(await mcp.client.ping()).toEqual({});
  });
});

describe('notifications/tools/list_changed', () => {
  it('is sent when the exposed set changes, and not when a hidden function comes and goes', async () => {
    let changes = 0;
    mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    const late = otherWorker('late');
    late.registerFunction('late::hidden', () => 1, {});
    await late.ready();
    await sleep(800);
    expect(changes).toBe(0);
    late.registerFunction('late::shown', () => 2, { metadata: { 'mcp.expose': true } });
    await waitFor(() => changes > 0, 5000);
    expect(await toolNames(mcp.client)).toContain('late__shown');
    const before = changes;
    await late.close();
    await waitFor(() => changes > before, 5000);
    expect(await toolNames(mcp.client)).not.toContain('late__shown');
  });
});

describe('--tier and --expose-all', () => {
  it('--tier keeps only functions whose mcp.tier matches; others answer the not-exposed text', async () => {
    const gold = await stdioMcp(engine, ['--tier', 'gold']);
    try {
      const names = await toolNames(gold.client);
      expect(names).toContain('demo__gold');
      expect(names).not.toContain('demo__silver');
      expect(names).not.toContain('demo__echo');
      const silver = await gold.client.callTool({ name: 'demo__silver', arguments: {} });
      expect(silver.isError).toBe(true);
      expect(textOf(silver)).toContain('does not match the active --tier filter');
      expect(textOf(await gold.client.callTool({ name: 'demo__gold', arguments: {} }))).toContain('gold');
    } finally {
      await gold.close();
    }
  });

  it('--expose-all ignores the opt-in (with a warning on stderr) but never the floor', async () => {
    const all = await stdioMcp(engine, ['--expose-all']);
    try {
      const names = await toolNames(all.client);
      expect(names).toContain('demo__hidden');
      expect(names).toContain('demo__string_flag');
      expect(names).not.toContain('state__sneaky');
      expect(names.some((n) => n.startsWith('engine__'))).toBe(false);
      expect(textOf(await all.client.callTool({ name: 'demo__hidden', arguments: {} }))).toBe('should never run');
      const floor = await all.client.callTool({ name: 'state__sneaky', arguments: {} });
      expect(floor.isError).toBe(true);
      expect(all.stderr()).toContain('--expose-all is set');
    } finally {
      await all.close();
    }
  });
});
