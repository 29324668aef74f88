/**
 * Issue 24 item 5: the hard floor covers the chat stack's control plane and functions marked
 * internal. Under `--expose-all`, over stdio and HTTP: `configuration::reveal` (the engine's own,
 * holding a real secret), `approval::set-mode` (the real approval gate), a function marked
 * `"internal": true` (opted in or not) and stand-ins in the other control namespaces are never
 * listed, never callable (each refusal an isError text naming why), never a built-in's target,
 * and never a resource or a prompt. Nothing behind them runs, and the session's mode stays put.
 */
import { connect, type EngClient } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { type RoleProcess, startRole } from '../../harness/src/shared/test-support.ts';
import { type HttpMcp, httpClient, httpMcp, type StdioMcp, startMcpEngine, stdioMcp, textOf, toolNames } from './helpers.ts';

let engine: EngineProcess;
let sessions: RoleProcess;
let approval: RoleProcess;
let worker: EngClient;
let stdio: StdioMcp;
let http: HttpMcp;
let httpMcpClient: Client;
/** Function ids whose handler ran: none of the floored ones may ever appear. */
const ran: string[] = [];

const SECRET = 'sk-floor-secret-4242';
const CONTROL_TEXT =
  /^Function '(.+)' belongs to the chat stack's control plane \((\w+)::\*\) and is never exposed via MCP, whatever the flags$/;
const INTERNAL_TEXT = /^Function '(.+)' is marked internal \(metadata "internal": true\) and is never exposed via MCP, whatever the flags$/;
/** Stand-ins in the control namespaces no worker of this test registers for real. */
const STAND_INS = ['harness::function::resolve', 'session::list', 'router::complete', 'provider::floorcheck::stream', 'context::compact'];
const FLOORED_TOOL = /^(approval|configuration|harness|session|router|provider|context)__|^floorcheck__internal/;

async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
  const text = textOf(result);
  expect(text).not.toContain(SECRET);
  return text;
}

const record = (id: string) => () => {
  ran.push(id);
  return `floor breached by ${id}`;
};

const mode = async (session_id: string) =>
  (await worker.call<{ settings: { mode: string } }>('approval::get-settings', { session_id })).settings.mode;

beforeAll(async () => {
  engine = await startMcpEngine(
    '  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n  - name: eng-pubsub\n',
  );
  sessions = startRole(engine.busUrl, 'session');
  approval = startRole(engine.busUrl, 'approval');
  await Promise.all([sessions.ready, approval.ready]);
  worker = connect(engine.busUrl, { name: 'control-floor-worker', logger: { debug() {}, info() {}, warn() {}, error() {} } });
  await worker.ready({ timeoutMs: 10_000 });
  // a configuration entry holding a key, as a provider's would
  await worker.call('configuration::register', {
    id: 'floorcheck-keys',
    schema: { type: 'object', properties: { api_key: { type: 'string', writeOnly: true } } },
    initial_value: { api_key: SECRET },
  });
  worker.registerFunction('floorcheck::internal', record('floorcheck::internal'), { metadata: { internal: true } });
  // opting in changes nothing for an internal function, as a tool, a resource or a prompt
  worker.registerFunction('floorcheck::internal_opted', record('floorcheck::internal_opted'), {
    metadata: { internal: true, 'mcp.expose': true },
  });
  worker.registerFunction('floorcheck::internal_resource', record('floorcheck::internal_resource'), {
    metadata: { internal: true, 'mcp.expose': true, 'mcp.resource': { uri: 'floorcheck://internal' } },
  });
  worker.registerFunction('floorcheck::internal_prompt', record('floorcheck::internal_prompt'), {
    metadata: { internal: true, 'mcp.expose': true, 'mcp.prompt': { name: 'floorcheck_internal_prompt' } },
  });
  for (const id of STAND_INS) worker.registerFunction(id, record(id), { metadata: { 'mcp.expose': true } });
  worker.registerFunction('router::floorcheck_resource', record('router::floorcheck_resource'), {
    metadata: { 'mcp.expose': true, 'mcp.resource': { uri: 'floorcheck://router' } },
  });
  worker.registerFunction('session::floorcheck_prompt', record('session::floorcheck_prompt'), {
    metadata: { 'mcp.expose': true, 'mcp.prompt': { name: 'floorcheck_session_prompt' } },
  });
  // a person subscribed a control function to a topic: a publish must not reach it through MCP
  worker.registerTrigger({ type: 'subscribe', function_id: 'approval::set-mode', config: { topic: 'floor-ops' } });
  // not opted in, outside the floor: --expose-all lists and runs it (the listings are live)
  worker.registerFunction('floorcheck::plain', () => 'plain ran');
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
      include_internal: true,
    });
    const ids = functions.map((f) => f.function_id);
    return ['floorcheck::plain', 'floorcheck::internal_prompt', 'approval::set-mode', ...STAND_INS].every((id) => ids.includes(id));
  }, 15_000);
  stdio = await stdioMcp(engine, ['--expose-all']);
  http = await httpMcp(engine, ['--expose-all']);
  httpMcpClient = await httpClient(http.url);
}, 90_000);

afterAll(async () => {
  await httpMcpClient?.close();
  await http?.stop();
  await stdio?.close();
  await worker?.close();
  await approval?.stop();
  await sessions?.stop();
  await engine?.stop();
});

describe('the chat control plane and internal functions under --expose-all', () => {
  it('tools/list shows none of them, on stdio and on HTTP, while a plain function is listed', async () => {
    for (const client of [stdio.client, httpMcpClient]) {
      const names = await toolNames(client);
      expect(names).toContain('floorcheck__plain');
      expect(names.filter((n) => FLOORED_TOOL.test(n))).toEqual([]);
    }
  });

  it('tools/call refuses configuration__reveal and approval__set-mode with the control-plane text; the key stays secret, the mode unchanged', async () => {
    expect(await mode('s-floor')).toBe('manual');
    for (const client of [stdio.client, httpMcpClient]) {
      expect(textOf(await client.callTool({ name: 'floorcheck__plain', arguments: {} }))).toBe('plain ran');
      const reveal = await refused(client, 'configuration__reveal', { id: 'floorcheck-keys' });
      expect(reveal).toMatch(CONTROL_TEXT);
      expect(reveal).toContain("'configuration::reveal'");
      expect(reveal).toContain('(configuration::*)');
      // the `::` spelling as a tool name takes the same path
      expect(await refused(client, 'configuration::reveal', { id: 'floorcheck-keys' })).toMatch(CONTROL_TEXT);
      const setMode = await refused(client, 'approval__set-mode', { session_id: 's-floor', mode: 'full' });
      expect(setMode).toMatch(CONTROL_TEXT);
      expect(setMode).toContain("'approval::set-mode'");
      for (const id of STAND_INS) expect(await refused(client, id.replaceAll('::', '__'), {}), id).toMatch(CONTROL_TEXT);
    }
    expect(await mode('s-floor')).toBe('manual');
    expect(ran).toEqual([]);
  });

  it('tools/call refuses a function marked internal, opted in or not, with the internal text', async () => {
    for (const client of [stdio.client, httpMcpClient]) {
      for (const name of ['floorcheck__internal', 'floorcheck__internal_opted']) {
        const text = await refused(client, name, {});
        expect(text).toMatch(INTERNAL_TEXT);
        expect(text).toContain(`'${name.replace('__', '::')}'`);
      }
    }
    expect(ran).toEqual([]);
  });

  it('a listed function re-registered as internal is refused on the next call (the guarded call checks the mark too)', async () => {
    worker.registerFunction('floorcheck::turncoat', () => 'turncoat ran');
    await waitFor(async () => (await toolNames(stdio.client)).includes('floorcheck__turncoat'), 15_000);
    expect(textOf(await stdio.client.callTool({ name: 'floorcheck__turncoat', arguments: {} }))).toBe('turncoat ran');
    // the engine lets the last writer win: another worker takes the id over, marked internal
    const other = connect(engine.busUrl, { name: 'control-floor-turncoat', logger: { debug() {}, info() {}, warn() {}, error() {} } });
    try {
      other.registerFunction('floorcheck::turncoat', record('floorcheck::turncoat'), { metadata: { internal: true } });
      await other.ready({ timeoutMs: 10_000 });
      await waitFor(async () => {
        const row = await worker.call<{ metadata?: { internal?: boolean } }>('engine::functions::info', {
          function_id: 'floorcheck::turncoat',
        });
        return row.metadata?.internal === true;
      }, 15_000);
      expect(await refused(stdio.client, 'floorcheck__turncoat', {})).toMatch(INTERNAL_TEXT);
      expect((await toolNames(stdio.client)).includes('floorcheck__turncoat')).toBe(false);
    } finally {
      await other.close();
    }
    expect(ran).toEqual([]);
  });

  it('eng_trigger_void, eng_trigger_enqueue and eng_trigger_register refuse them as targets, in either spelling', async () => {
    const targets: Array<[string, RegExp]> = [
      ['configuration::reveal', CONTROL_TEXT],
      ['configuration__reveal', CONTROL_TEXT],
      ['approval::set-mode', CONTROL_TEXT],
      ['approval__set-mode', CONTROL_TEXT],
      ['harness::function::resolve', CONTROL_TEXT],
      ['session__list', CONTROL_TEXT],
      ['floorcheck::internal', INTERNAL_TEXT],
      ['floorcheck__internal_opted', INTERNAL_TEXT],
    ];
    for (const [target, text] of targets) {
      const payload = { id: 'floorcheck-keys', session_id: 's-floor', mode: 'full' };
      expect(await refused(stdio.client, 'eng_trigger_void', { function_id: target, payload }), target).toMatch(text);
      expect(await refused(stdio.client, 'eng_trigger_enqueue', { function_id: target, payload }), target).toMatch(text);
      const config = { api_path: 'floorcheck/never', http_method: 'POST' };
      expect(await refused(stdio.client, 'eng_trigger_register', { trigger_type: 'http', function_id: target, config }), target).toMatch(
        text,
      );
    }
    // a spawned worker may not take over a control-plane id either
    const code = 'async () => ({ taken: true })';
    expect(await refused(stdio.client, 'eng_worker_register', { language: 'node', code, function_name: 'approval::resolve' })).toMatch(
      CONTROL_TEXT,
    );
    // let a void or queued call that slipped through reach its handler before looking
    await new Promise((r) => setTimeout(r, 300));
    expect(await mode('s-floor')).toBe('manual');
    expect(ran).toEqual([]);
  });

  it('engine functions that call others (publish, bridge.invoke) are floored: no tool, no built-in target', async () => {
    const WRAPPER_TEXT = /^Function '(publish|bridge\.invoke|bridge\.invoke_async)' is an engine function that calls other functions/;
    const payload = { topic: 'floor-ops', data: { session_id: 's-floor', mode: 'full' } };
    for (const client of [stdio.client, httpMcpClient]) {
      expect(await toolNames(client)).not.toContain('publish');
      expect(await refused(client, 'publish', payload)).toMatch(WRAPPER_TEXT);
    }
    for (const target of ['publish', 'bridge.invoke', 'bridge.invoke_async']) {
      expect(await refused(stdio.client, 'eng_trigger_void', { function_id: target, payload }), target).toMatch(WRAPPER_TEXT);
      expect(await refused(stdio.client, 'eng_trigger_enqueue', { function_id: target, payload }), target).toMatch(WRAPPER_TEXT);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await mode('s-floor')).toBe('manual');
  });

  it('resources, resource templates, prompts and completions never name them', async () => {
    const client = stdio.client;
    const read = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
    const floored = (id: string) => /^(approval|configuration|harness|session|router|provider|context)::|^floorcheck::internal/.test(id);
    const functions = (await read('eng://functions')) as Array<{ function_id: string }>;
    expect(functions.map((f) => f.function_id)).toContain('floorcheck::plain');
    expect(functions.filter((f) => floored(f.function_id))).toEqual([]);
    const workers = (await read('eng://workers')) as Array<{ functions: string[] }>;
    for (const w of workers) expect(w.functions.filter(floored)).toEqual([]);
    for (const uri of [
      'eng://function/configuration::reveal',
      'eng://function/configuration__reveal',
      'eng://function/approval%3A%3Aset-mode',
      'eng://function/floorcheck::internal',
      'eng://function/floorcheck::internal_opted',
      'eng://function/session::list',
    ]) {
      const err = await client.readResource({ uri }).catch((e: unknown) => e);
      expect(err, uri).toBeInstanceOf(McpError);
      expect((err as McpError).code, uri).toBe(-32002);
    }
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources.filter((uri) => uri.startsWith('floorcheck://'))).toEqual([]);
    for (const uri of ['floorcheck://internal', 'floorcheck://router']) {
      const err = await client.readResource({ uri }).catch((e: unknown) => e);
      expect(err, uri).toBeInstanceOf(McpError);
    }
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts.filter((name) => name.startsWith('floorcheck_'))).toEqual([]);
    for (const name of ['floorcheck_internal_prompt', 'floorcheck_session_prompt']) {
      const err = await client.getPrompt({ name }).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(McpError);
    }
    const completion = await client.complete({
      ref: { type: 'ref/resource', uri: 'eng://function/{id}' },
      argument: { name: 'id', value: '' },
    });
    expect(completion.completion.values).toContain('floorcheck::plain');
    expect(completion.completion.values.filter(floored)).toEqual([]);
    const context = await read('eng://context');
    expect(context.exposure.hard_floor).toEqual(expect.arrayContaining(['approval::', 'configuration::', 'harness::', 'session::']));
    expect(ran).toEqual([]);
  });
});
