/**
 * Resources, templates and subscriptions (seed §2.13, mcp.md §8 and §10; hidden ids never leak,
 * unknown resources are -32002), prompts (-32602 for missing arguments) and completion/complete.
 */
import { connect, type EngClient } from '@eng/sdk';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { demoWorker, type StdioMcp, startMcpEngine, stdioMcp } from './helpers.ts';

let engine: EngineProcess;
let worker: EngClient;
let mcp: StdioMcp;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function read(uri: string): Promise<any> {
  const { contents } = await mcp.client.readResource({ uri });
  expect(contents).toHaveLength(1);
  expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
  return JSON.parse((contents[0] as { text: string }).text);
}

const promptText = (result: { messages: Array<{ content: unknown }> }): string =>
  (result.messages[0]?.content as { text?: string } | undefined)?.text ?? '';

async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  const err = await promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = await demoWorker(engine);
  worker.registerTrigger({ type: 'http', function_id: 'demo::echo', config: { api_path: 'res/echo', http_method: 'POST' } });
  worker.registerTrigger({ type: 'http', function_id: 'demo::hidden', config: { api_path: 'res/hidden', http_method: 'POST' } });
  mcp = await stdioMcp(engine);
});
afterAll(async () => {
  await mcp?.close();
  await worker?.close();
  await engine?.stop();
});

describe('resources', () => {
  it('lists the four resources and the three templates', async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['eng://functions', 'eng://workers', 'eng://triggers', 'eng://context']);
    for (const r of resources)
      expect(r).toMatchObject({ name: expect.any(String), mimeType: 'application/json', description: expect.any(String) });
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['eng://function/{id}', 'eng://worker/{id}', 'eng://trigger/{id}']);
  });

  it('eng://functions lists exposed functions only, with their tool names and schemas', async () => {
    const functions: Array<{ function_id: string; tool_name: string }> = await read('eng://functions');
    const ids = functions.map((f) => f.function_id);
    expect(ids).toContain('demo::echo');
    expect(ids).not.toContain('demo::hidden');
    expect(ids.some((id) => id.startsWith('engine::') || id.startsWith('state::') || id.startsWith('mcp::'))).toBe(false);
    expect(functions.find((f) => f.function_id === 'demo::typed')).toMatchObject({
      tool_name: 'demo__typed',
      description: 'Double a number',
      request_format: { type: 'object', required: ['n'] },
      metadata: { 'mcp.expose': true },
    });
  });

  it('eng://workers and eng://triggers never name hidden functions', async () => {
    const workers: Array<{ name: string; functions: string[] }> = await read('eng://workers');
    const demo = workers.find((w) => w.name === 'mcp-demo');
    expect(demo?.functions).toContain('demo::echo');
    expect(demo?.functions).not.toContain('demo::hidden');
    expect(demo?.functions).not.toContain('state::sneaky');
    const triggers: Array<{ function_id: string; trigger_type: string }> = await read('eng://triggers');
    expect(triggers.map((t) => t.function_id)).toContain('demo::echo');
    expect(triggers.map((t) => t.function_id)).not.toContain('demo::hidden');
  });

  it('eng://context explains the naming, the metadata keys and the floor', async () => {
    const context = await read('eng://context');
    expect(context).toMatchObject({
      server: { name: 'eng-mcp' },
      transport: 'stdio',
      function_id_delimiter: '::',
      tool_name_delimiter: '__',
      exposure: { metadata_key: 'mcp.expose', tier_key: 'mcp.tier', tier: null, expose_all: false },
      builtins_visible: true,
    });
    expect(context.exposure.hard_floor).toEqual([
      'engine::',
      'state::',
      'stream::',
      'eng.',
      'eng::',
      'iii.',
      'iii::',
      'mcp::',
      'a2a::',
      'approval::',
      'configuration::',
      'harness::',
      'session::',
      'router::',
      'provider::',
      'context::',
    ]);
    expect(context.exposure.hard_floor_metadata).toContain('"internal": true');
  });

  it('templated reads find exposed items by id (or tool name) and answer -32002 for hidden or unknown ones', async () => {
    expect(await read('eng://function/demo::echo')).toMatchObject({ function_id: 'demo::echo', tool_name: 'demo__echo' });
    expect(await read('eng://function/demo__echo')).toMatchObject({ function_id: 'demo::echo' });
    expect(await read('eng://function/demo%3A%3Aecho')).toMatchObject({ function_id: 'demo::echo' });
    expect((await read('eng://worker/mcp-demo')).functions).toContain('demo::echo');
    const triggers: Array<{ id: string; function_id: string }> = await read('eng://triggers');
    const echoTrigger = triggers.find((t) => t.function_id === 'demo::echo');
    expect(await read(`eng://trigger/${echoTrigger?.id}`)).toMatchObject({ function_id: 'demo::echo', trigger_type: 'http' });

    const { registered_triggers } = await worker.call<{ registered_triggers: Array<{ id: string; function_id: string }> }>(
      'engine::registered-triggers::list',
      {},
    );
    const hiddenTrigger = registered_triggers.find((t) => t.function_id === 'demo::hidden');
    for (const uri of [
      'eng://function/demo::hidden',
      'eng://function/state::sneaky',
      'eng://function/nope::nothing',
      `eng://trigger/${hiddenTrigger?.id}`,
      'eng://worker/nobody',
      'eng://nothing',
      'file:///etc/passwd',
    ]) {
      const err = await mcpError(mcp.client.readResource({ uri }));
      expect(err.code, uri).toBe(-32002);
      expect(err.message).toContain(`Resource not found: ${uri}`);
    }
    const bad = await mcpError(
      mcp.client.request(
        { method: 'resources/read', params: {} } as never,
        (await import('@modelcontextprotocol/sdk/types.js')).ReadResourceResultSchema,
      ),
    );
    expect(bad.code).toBe(-32602);
  });

  it('subscribe sends notifications/resources/updated when the content changes; unsubscribe stops them', async () => {
    const updates: string[] = [];
    mcp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    expect(await mcp.client.subscribeResource({ uri: 'eng://functions' })).toEqual({});
    expect(await mcp.client.subscribeResource({ uri: 'eng://function/sub::one' })).toEqual({});
    const other: EngClient = connect(engine.busUrl, { name: 'sub', logger: quiet });
    other.registerFunction('sub::one', () => 1, { metadata: { 'mcp.expose': true } });
    await other.ready();
    await waitFor(() => updates.includes('eng://functions') && updates.includes('eng://function/sub::one'), 8000);

    expect(await mcp.client.unsubscribeResource({ uri: 'eng://functions' })).toEqual({});
    await mcp.client.unsubscribeResource({ uri: 'eng://function/sub::one' });
    updates.length = 0;
    other.registerFunction('sub::two', () => 2, { metadata: { 'mcp.expose': true } });
    await waitFor(async () => (await mcp.client.listTools()).tools.some((t) => t.name === 'sub__two'));
    await new Promise((r) => setTimeout(r, 500));
    expect(updates).toEqual([]);
    await other.close();
    const invalid = await mcpError(mcp.client.subscribeResource({ uri: 'no scheme' }));
    expect(invalid.code).toBe(-32602);
  });
});

describe('prompts', () => {
  it('lists four prompts with descriptions and arguments', async () => {
    const { prompts } = await mcp.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['register-function', 'build-api', 'setup-cron', 'event-pipeline']);
    for (const p of prompts) expect(p.description).toEqual(expect.any(String));
    expect(prompts[0]?.arguments).toEqual([
      { name: 'language', description: 'node or python', required: true },
      { name: 'function_id', description: 'e.g. myservice::process', required: true },
    ]);
  });

  it('renders texts that use our SDK, tool names and the mangled tool name', async () => {
    const node = await mcp.client.getPrompt({ name: 'register-function', arguments: { language: 'node', function_id: 'billing::charge' } });
    const nodeText = promptText(node);
    expect(node.messages[0]?.role).toBe('user');
    expect(nodeText).toContain("import { connect } from '@eng/sdk'");
    expect(nodeText).toContain("'mcp.expose': true");
    expect(nodeText).toContain('eng_worker_register');
    expect(nodeText).toContain('billing__charge');
    const python = await mcp.client.getPrompt({
      name: 'register-function',
      arguments: { language: 'python', function_id: 'billing::charge' },
    });
    expect(promptText(python)).toContain('async def handler(input)');
    const api = await mcp.client.getPrompt({ name: 'build-api', arguments: { method: 'post', path: '/users' } });
    const apiText = promptText(api);
    expect(apiText).toContain('"api_path": "users"');
    expect(apiText).toContain('"http_method": "POST"');
    expect(apiText).toContain('eng_trigger_register');
    const cron = await mcp.client.getPrompt({ name: 'setup-cron', arguments: { schedule: '0 */5 * * * *' } });
    expect(promptText(cron)).toContain('"expression": "0 */5 * * * *"');
    const pipeline = await mcp.client.getPrompt({ name: 'event-pipeline' });
    const pipelineText = promptText(pipeline);
    expect(pipelineText).toContain('durable:subscriber');
    expect(pipelineText).toContain('eng_trigger_enqueue');
    expect(pipelineText).toContain('eng_trigger_void');
  });

  it('answers -32602 for missing required arguments, an unknown prompt or an unsupported language', async () => {
    const missing = await mcpError(mcp.client.getPrompt({ name: 'register-function', arguments: { language: 'node' } }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain('Missing required argument: function_id');
    const empty = await mcpError(mcp.client.getPrompt({ name: 'setup-cron', arguments: { schedule: ' ' } }));
    expect(empty.message).toContain('Missing required argument: schedule');
    const unknown = await mcpError(mcp.client.getPrompt({ name: 'make-coffee' }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain('Unknown prompt: make-coffee');
    const ruby = await mcpError(mcp.client.getPrompt({ name: 'register-function', arguments: { language: 'ruby', function_id: 'a::b' } }));
    expect(ruby.code).toBe(-32602);
    expect(ruby.message).toContain('Unsupported language `ruby`');
  });
});

describe('completion/complete', () => {
  it('completes prompt arguments by prefix, and resource template ids from exposed functions only', async () => {
    const language = await mcp.client.complete({
      ref: { type: 'ref/prompt', name: 'register-function' },
      argument: { name: 'language', value: 'p' },
    });
    expect(language.completion).toEqual({ values: ['python'], total: 1, hasMore: false });
    const method = await mcp.client.complete({ ref: { type: 'ref/prompt', name: 'build-api' }, argument: { name: 'method', value: 'P' } });
    expect(method.completion.values).toEqual(['POST', 'PUT', 'PATCH']);
    const none = await mcp.client.complete({ ref: { type: 'ref/prompt', name: 'not-a-prompt' }, argument: { name: 'x', value: '' } });
    expect(none.completion.values).toEqual([]);
    const fns = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'eng://function/{id}' },
      argument: { name: 'id', value: 'demo::' },
    });
    expect(fns.completion.values).toContain('demo::echo');
    expect(fns.completion.values).not.toContain('demo::hidden');
    const state = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'eng://function/{id}' },
      argument: { name: 'id', value: 'state::' },
    });
    expect(state.completion.values).toEqual([]);
    const bad = await mcpError(
      mcp.client.request(
        { method: 'completion/complete', params: { ref: { type: 'ref/tool', name: 'x' }, argument: { name: 'a', value: '' } } } as never,
        (await import('@modelcontextprotocol/sdk/types.js')).CompleteResultSchema,
      ),
    );
    expect(bad.code).toBe(-32602);
  });
});
