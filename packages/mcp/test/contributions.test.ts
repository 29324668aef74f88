/**
 * Issue 18 item 3: resources, resource templates and prompts contributed by engine functions
 * (metadata `"mcp.resource"` / `"mcp.prompt"`), read and rendered by calling the function, with the
 * exposure gate and the hard floor applied as to tools, and list_changed when they come and go;
 * with the MCP SDK client over stdio and over Streamable HTTP.
 */
import { connect, type EngClient } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { PNG_BASE64 } from './conformance-fixtures.ts';
import { type HttpMcp, httpClient, httpMcp, startMcpEngine, stdioMcp } from './helpers.ts';

const expose = { 'mcp.expose': true };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let engine: EngineProcess;
let worker: EngClient;
let http: HttpMcp;
const reads: unknown[] = [];

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = connect(engine.busUrl, { name: 'contrib-worker', logger: quiet });
  worker.registerFunction(
    'docs::readme',
    (input) => {
      reads.push(input);
      return '# Orders\nA demo.';
    },
    {
      description: 'The project readme',
      metadata: { ...expose, 'mcp.resource': { uri: 'docs://readme', name: 'readme', title: 'README', mime_type: 'text/markdown' } },
    },
  );
  worker.registerFunction('docs::logo', () => ({ blob: PNG_BASE64 }), {
    metadata: { ...expose, 'mcp.resource': { uri: 'docs://logo.png', name: 'logo', mime_type: 'image/png' } },
  });
  worker.registerFunction('docs::config', () => ({ retries: 3, zones: ['a', 'b'] }), {
    description: 'Current configuration',
    metadata: { ...expose, 'mcp.resource': { uri: 'docs://config' } },
  });
  worker.registerFunction(
    'docs::page',
    (input: { section: string; page: string; uri: string }) => ({
      contents: [
        { uri: input.uri, mimeType: 'text/plain', text: `section ${input.section}, page ${input.page}` },
        { uri: `${input.uri}#figure`, mimeType: 'image/png', blob: PNG_BASE64 },
      ],
    }),
    {
      description: 'One page of the docs',
      metadata: { ...expose, 'mcp.resource': { uri_template: 'docs://{section}/pages/{page}', name: 'page', mime_type: 'text/plain' } },
    },
  );
  worker.registerFunction(
    'docs::broken',
    () => {
      throw new Error('disk on fire');
    },
    { metadata: { ...expose, 'mcp.resource': { uri: 'docs://broken' } } },
  );
  // not opted in, in the floor, or a bad definition: none of these is listed or readable
  worker.registerFunction('docs::secret', () => 'top secret', { metadata: { 'mcp.resource': { uri: 'docs://secret' } } });
  worker.registerFunction('state::docs', () => 'floor breached', { metadata: { ...expose, 'mcp.resource': { uri: 'docs://floor' } } });
  worker.registerFunction('docs::hijack', () => 'x', { metadata: { ...expose, 'mcp.resource': { uri: 'eng://functions' } } });
  worker.registerFunction('docs::both', () => 'x', {
    metadata: { ...expose, 'mcp.resource': { uri: 'docs://a', uri_template: 'docs://{b}' } },
  });

  worker.registerFunction(
    'prompts::review',
    (args: { language: string; focus?: string }) => `Review this ${args.language} code${args.focus ? ` for ${args.focus}` : ''}.`,
    {
      description: 'Ask for a code review',
      metadata: {
        ...expose,
        'mcp.prompt': {
          name: 'code_review',
          title: 'Code review',
          arguments: [
            { name: 'language', description: 'programming language', required: true },
            { name: 'focus', required: false },
          ],
        },
      },
    },
  );
  worker.registerFunction(
    'prompts::with_media',
    () => ({
      description: 'An image and a document',
      messages: [
        { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'docs://readme', mimeType: 'text/markdown', text: '# Orders' } } },
        { role: 'assistant', content: { type: 'text', text: 'Seen both.' } },
      ],
    }),
    { metadata: { ...expose, 'mcp.prompt': true } },
  );
  worker.registerFunction('prompts::hidden', () => 'hidden', { metadata: { 'mcp.prompt': { name: 'hidden_prompt' } } });
  worker.registerFunction('prompts::taken', () => 'x', { metadata: { ...expose, 'mcp.prompt': { name: 'register-function' } } });
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'prompts::taken');
  });
  http = await httpMcp(engine);
}, 60_000);

afterAll(async () => {
  await http?.stop();
  await worker?.close();
  await engine?.stop();
});

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

type Open = () => Promise<{ client: Client; close(): Promise<void> }>;
const transports: Array<[string, Open]> = [
  [
    'stdio',
    async () => {
      const mcp = await stdioMcp(engine);
      return { client: mcp.client, close: () => mcp.close() };
    },
  ],
  [
    'Streamable HTTP',
    async () => {
      const client = await httpClient(http.url);
      return { client, close: () => client.close() };
    },
  ],
];

describe.each(transports)('over %s', (_name, open) => {
  let client: Client;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ client, close } = await open());
  }, 30_000);
  afterAll(() => close?.());

  it('lists the resources and templates of exposed functions next to eng-mcp’s own, and nothing hidden', async () => {
    const { resources } = await client.listResources();
    const own = resources.filter((r) => !r.uri.startsWith('eng://')).sort((a, b) => a.uri.localeCompare(b.uri));
    expect(own).toEqual([
      { uri: 'docs://broken', name: 'docs__broken', description: 'Resource read by function docs::broken' },
      { uri: 'docs://config', name: 'docs__config', description: 'Current configuration' },
      { uri: 'docs://logo.png', name: 'logo', description: 'Resource read by function docs::logo', mimeType: 'image/png' },
      { uri: 'docs://readme', name: 'readme', title: 'README', description: 'The project readme', mimeType: 'text/markdown' },
    ]);
    expect(resources.filter((r) => r.uri.startsWith('eng://')).map((r) => r.uri)).toEqual([
      'eng://functions',
      'eng://workers',
      'eng://triggers',
      'eng://context',
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.filter((t) => !t.uriTemplate.startsWith('eng://'))).toEqual([
      { uriTemplate: 'docs://{section}/pages/{page}', name: 'page', description: 'One page of the docs', mimeType: 'text/plain' },
    ]);
  });

  it('reads by calling the function: text, a blob, JSON data, and a template with its variables', async () => {
    const readme = await client.readResource({ uri: 'docs://readme' });
    expect(readme.contents).toEqual([{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Orders\nA demo.' }]);
    expect(reads.at(-1)).toMatchObject({ uri: 'docs://readme' });
    expect((await client.readResource({ uri: 'docs://logo.png' })).contents).toEqual([
      { uri: 'docs://logo.png', mimeType: 'image/png', blob: PNG_BASE64 },
    ]);
    expect((await client.readResource({ uri: 'docs://config' })).contents).toEqual([
      { uri: 'docs://config', mimeType: 'application/json', text: JSON.stringify({ retries: 3, zones: ['a', 'b'] }, null, 2) },
    ]);
    const page = await client.readResource({ uri: 'docs://guide%20book/pages/7' });
    expect(page.contents).toEqual([
      { uri: 'docs://guide%20book/pages/7', mimeType: 'text/plain', text: 'section guide book, page 7' },
      { uri: 'docs://guide%20book/pages/7#figure', mimeType: 'image/png', blob: PNG_BASE64 },
    ]);
  });

  it('applies the exposure gate and the hard floor: hidden, floored and unknown URIs are -32002; a failing function -32603', async () => {
    for (const uri of ['docs://secret', 'docs://floor', 'docs://a', 'docs://nowhere', 'docs://x/pages']) {
      const err = await rpcError(client.readResource({ uri }));
      expect(err.code, uri).toBe(-32002);
      expect(err.message, uri).toBe(`MCP error -32002: Resource not found: ${uri}`);
    }
    const broken = await rpcError(client.readResource({ uri: 'docs://broken' }));
    expect(broken.code).toBe(-32603);
    expect(broken.message).toContain('function docs::broken failed');
    expect(broken.message).toContain('disk on fire');
    // eng:// stays eng-mcp's: a function cannot take it over
    const functions = JSON.parse(((await client.readResource({ uri: 'eng://functions' })).contents[0] as { text: string }).text);
    expect(Array.isArray(functions)).toBe(true);
  });

  it('resource and prompt functions are not tools', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => n.startsWith('docs__') || n.startsWith('prompts__'))).toEqual([]);
    const err = await rpcError(client.callTool({ name: 'docs__readme', arguments: {} }));
    expect(err.code).toBe(-32602);
  });

  it('lists the prompts of exposed functions and renders them by calling the function', async () => {
    const { prompts } = await client.listPrompts();
    const own = prompts
      .filter((p) => !['register-function', 'build-api', 'setup-cron', 'event-pipeline'].includes(p.name))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(own).toEqual([
      {
        name: 'code_review',
        title: 'Code review',
        description: 'Ask for a code review',
        arguments: [
          { name: 'language', description: 'programming language', required: true },
          { name: 'focus', required: false },
        ],
      },
      { name: 'prompts__with_media', description: 'Prompt rendered by function prompts::with_media', arguments: [] },
    ]);
    expect(prompts.filter((p) => p.name === 'register-function')).toHaveLength(1);

    expect(await client.getPrompt({ name: 'code_review', arguments: { language: 'Rust', focus: 'safety' } })).toEqual({
      description: 'Ask for a code review',
      messages: [{ role: 'user', content: { type: 'text', text: 'Review this Rust code for safety.' } }],
    });
    const media = await client.getPrompt({ name: 'prompts__with_media' });
    expect(media.description).toBe('An image and a document');
    expect(media.messages.map((m) => [m.role, m.content.type])).toEqual([
      ['user', 'image'],
      ['user', 'resource'],
      ['assistant', 'text'],
    ]);
    const missing = await rpcError(client.getPrompt({ name: 'code_review', arguments: {} }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toBe('MCP error -32602: Missing required argument: language');
    const hidden = await rpcError(client.getPrompt({ name: 'hidden_prompt' }));
    expect(hidden.code).toBe(-32602);
    expect(hidden.message).toBe('MCP error -32602: Unknown prompt: hidden_prompt');
  });

  it('notifies resources and prompts list_changed when a contributing function comes and goes', async () => {
    const changes: string[] = [];
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes.push('resources');
    });
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      changes.push('prompts');
    });
    const late = connect(engine.busUrl, { name: 'contrib-late', logger: quiet });
    try {
      late.registerFunction('late::notes', () => 'notes', { metadata: { ...expose, 'mcp.resource': { uri: 'late://notes' } } });
      late.registerFunction('late::greet', () => 'hello', { metadata: { ...expose, 'mcp.prompt': { name: 'late_greet' } } });
      await late.ready({ timeoutMs: 5000 });
      await waitFor(() => changes.includes('resources') && changes.includes('prompts'), 10_000);
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain('late://notes');
      expect((await client.readResource({ uri: 'late://notes' })).contents).toEqual([
        { uri: 'late://notes', mimeType: 'text/plain', text: 'notes' },
      ]);
      changes.length = 0;
    } finally {
      await late.close();
    }
    await waitFor(() => changes.includes('resources') && changes.includes('prompts'), 10_000);
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain('late://notes');
    expect((await rpcError(client.readResource({ uri: 'late://notes' }))).code).toBe(-32002);
  });
});

describe('--tier', () => {
  it('contributes only the functions of the tier, like tools', async () => {
    const tiered = connect(engine.busUrl, { name: 'contrib-tier', logger: quiet });
    tiered.registerFunction('tier::gold_doc', () => 'gold', {
      metadata: { ...expose, 'mcp.tier': 'gold', 'mcp.resource': { uri: 'tier://gold' } },
    });
    await tiered.ready({ timeoutMs: 5000 });
    const gold = await stdioMcp(engine, ['--tier', 'gold']);
    try {
      await waitFor(async () => (await gold.client.listResources()).resources.some((r) => r.uri === 'tier://gold'), 10_000);
      const uris = (await gold.client.listResources()).resources.map((r) => r.uri).filter((u) => !u.startsWith('eng://'));
      expect(uris).toEqual(['tier://gold']);
      expect((await rpcError(gold.client.readResource({ uri: 'docs://readme' }))).code).toBe(-32002);
    } finally {
      await gold.close();
      await tiered.close();
    }
  });
});

describe('definitions that cannot be used', () => {
  it('are skipped with a warning naming the function and the reason; the rest still lists', async () => {
    const mcp = await stdioMcp(engine);
    try {
      expect((await mcp.client.listResources()).resources.map((r) => r.uri)).toContain('docs://readme');
      expect((await mcp.client.listPrompts()).prompts.filter((p) => p.name === 'register-function')).toHaveLength(1);
      await waitFor(() => mcp.stderr().includes('docs::both'), 5000);
      const warnings = mcp
        .stderr()
        .split('\n')
        .filter((l) => l.includes('skipped an MCP resource, prompt or skill definition'))
        .map((l) => l.replace(/^.*definition: /, ''));
      expect(warnings.sort()).toEqual([
        'docs::both: "mcp.resource" needs exactly one of uri and uri_template',
        "docs::hijack: the eng:// scheme belongs to eng-mcp's own resources",
        'prompts::taken: prompt name "register-function" is already taken',
      ]);
    } finally {
      await mcp.close();
    }
  });
});
