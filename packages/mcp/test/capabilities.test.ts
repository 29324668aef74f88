/**
 * Issue 18 items 1 and 2 with the official MCP SDK client, over stdio and over Streamable HTTP:
 * a function's MCP content (text, image, audio, resource_link, embedded resource) passes through as
 * the tool result; a function asks the client for sampling and elicitation (defaults, enum forms,
 * url mode) through the per-call functions in `metadata.mcp`, answered with the client's reply, and
 * refused with a clear error when the client did not declare the capability.
 */
import type { EngClient } from '@eng/sdk';
import { connect } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { mcpOf, PNG_BASE64, wavBase64 } from './conformance-fixtures.ts';
import { type HttpMcp, httpClient, httpMcp, startMcpEngine, stdioMcp, textOf } from './helpers.ts';

const expose = { 'mcp.expose': true };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const WAV = wavBase64();

const MIXED = [
  { type: 'text', text: 'an order receipt' },
  { type: 'image', data: PNG_BASE64, mimeType: 'image/png', annotations: { audience: ['user'] } },
  { type: 'audio', data: WAV, mimeType: 'audio/wav' },
  { type: 'resource_link', uri: 'orders://order/42', name: 'order 42', mimeType: 'application/json', description: 'the order' },
  { type: 'resource', resource: { uri: 'orders://order/42/label', mimeType: 'image/png', blob: PNG_BASE64 } },
  { type: 'resource', resource: { uri: 'orders://order/42/note', mimeType: 'text/plain', text: 'fragile' } },
];

/** What the elicitation function sends: every primitive with a default, and the five enum forms. */
const FORM_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', minimum: 0, default: 30 },
    score: { type: 'number', default: 95.5 },
    verified: { type: 'boolean', default: true },
    status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
    titled: {
      type: 'string',
      oneOf: [
        { const: 'a', title: 'Option A' },
        { const: 'b', title: 'Option B' },
      ],
    },
    legacy: { type: 'string', enum: ['x', 'y'], enumNames: ['Ex', 'Why'] },
    many: { type: 'array', items: { type: 'string', enum: ['p', 'q'] } },
    manyTitled: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'm', title: 'Em' },
          { const: 'n', title: 'En' },
        ],
      },
    },
  },
  required: ['name'],
};

let engine: EngineProcess;
let worker: EngClient;
let http: HttpMcp;

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = connect(engine.busUrl, { name: 'capabilities-worker', logger: quiet });
  worker.registerFunction('rich::mixed', () => ({ content: MIXED }), { description: 'every content block type', metadata: expose });
  worker.registerFunction('rich::error', () => ({ content: [{ type: 'text', text: 'out of stock' }], isError: true }), {
    metadata: expose,
  });
  // not MCP content: ordinary data that happens to have a `content` key stays JSON text
  worker.registerFunction('rich::not_blocks', () => ({ content: 'a CMS page', id: 7 }), { metadata: expose });
  worker.registerFunction('rich::bad_block', () => ({ content: [{ type: 'image', data: PNG_BASE64 }] }), { metadata: expose });
  worker.registerFunction(
    'rich::structured',
    (input: { with?: boolean }) => ({
      content: [{ type: 'text', text: 'n is 1' }],
      ...(input.with === false ? {} : { structuredContent: { n: 1 } }),
    }),
    {
      request_format: { type: 'object', properties: { with: { type: 'boolean' } } },
      response_format: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      metadata: expose,
    },
  );
  worker.registerFunction(
    'ask::sample',
    async (input: { prompt: string }, ctx) => {
      const mcp = mcpOf(ctx);
      try {
        return await worker.call(mcp.sampling_function, {
          token: mcp.token,
          messages: [{ role: 'user', content: { type: 'text', text: input.prompt } }],
          maxTokens: 64,
          systemPrompt: 'be brief',
        });
      } catch (err) {
        return { error: (err as Error).message, code: (err as { code?: string }).code };
      }
    },
    { request_format: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] }, metadata: expose },
  );
  worker.registerFunction(
    'ask::elicit',
    async (input: { mode?: string }, ctx) => {
      const mcp = mcpOf(ctx);
      const params =
        input.mode === 'url'
          ? { mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e-1' }
          : { message: 'Check your details', requestedSchema: FORM_SCHEMA };
      try {
        return await worker.call(mcp.elicitation_function, { token: mcp.token, ...params });
      } catch (err) {
        return { error: (err as Error).message, code: (err as { code?: string }).code };
      }
    },
    { request_format: { type: 'object', properties: { mode: { type: 'string' } } }, metadata: expose },
  );
  worker.registerFunction(
    'ask::stale_token',
    async (_input, ctx) => {
      const mcp = mcpOf(ctx);
      try {
        await worker.call(mcp.sampling_function, { token: 'not-a-call', messages: [], maxTokens: 1 });
        return 'accepted';
      } catch (err) {
        return { error: (err as Error).message, code: (err as { code?: string }).code };
      }
    },
    { metadata: expose },
  );
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'ask::stale_token');
  });
  http = await httpMcp(engine);
}, 60_000);

afterAll(async () => {
  await http?.stop();
  await worker?.close();
  await engine?.stop();
});

interface Asked {
  sampling: any[];
  elicitation: any[];
}

/** A client that declares sampling and elicitation (form and url) and answers them like a host would. */
function answering(client: Client, asked: Asked): Client {
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.sampling.push(request.params);
    const prompt = (request.params.messages[0]?.content as { text?: string } | undefined)?.text;
    return { role: 'assistant', content: { type: 'text', text: `echo: ${prompt}` }, model: 'fake-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.elicitation.push(request.params);
    if (request.params.mode === 'url') return { action: 'accept' };
    return { action: 'accept', content: { name: 'Jane', age: 41, score: 88, verified: false, status: 'inactive', many: ['p'] } };
  });
  return client;
}

const CAPABLE = { capabilities: { sampling: {}, elicitation: { form: {}, url: {} } } };

type Connect = (capable: boolean) => Promise<{ client: Client; close(): Promise<void> }>;

const transports: Array<[string, Connect]> = [
  [
    'stdio',
    async (capable) => {
      const mcp = await stdioMcp(engine, [], {}, capable ? CAPABLE : undefined);
      return { client: mcp.client, close: () => mcp.close() };
    },
  ],
  [
    'Streamable HTTP',
    async (capable) => {
      const client = await httpClient(http.url, capable ? CAPABLE : undefined);
      return { client, close: () => client.close() };
    },
  ],
];

describe.each(transports)('over %s', (_name, open) => {
  let capable: { client: Client; close(): Promise<void> };
  let bare: { client: Client; close(): Promise<void> };
  const asked: Asked = { sampling: [], elicitation: [] };

  beforeAll(async () => {
    capable = await open(true);
    answering(capable.client, asked);
    bare = await open(false);
  }, 30_000);
  afterAll(async () => {
    await capable?.close();
    await bare?.close();
  });

  it('passes MCP content blocks through as they are: text, image, audio, resource_link, embedded text and blob resources', async () => {
    const result = await capable.client.callTool({ name: 'rich__mixed', arguments: {} });
    expect(result).toEqual({ content: MIXED, isError: false });
    const failed = await capable.client.callTool({ name: 'rich__error', arguments: {} });
    expect(failed).toEqual({ content: [{ type: 'text', text: 'out of stock' }], isError: true });
  });

  it('keeps ordinary data (a content key that is not blocks, an invalid block) as JSON text', async () => {
    const notBlocks = await capable.client.callTool({ name: 'rich__not_blocks', arguments: {} });
    expect(notBlocks.content).toEqual([{ type: 'text', text: JSON.stringify({ content: 'a CMS page', id: 7 }, null, 2) }]);
    const bad = await capable.client.callTool({ name: 'rich__bad_block', arguments: {} });
    expect(bad.isError).toBe(false);
    expect(JSON.parse(textOf(bad))).toEqual({ content: [{ type: 'image', data: PNG_BASE64 }] });
  });

  it('checks the structuredContent of a content result against the outputSchema', async () => {
    const good = await capable.client.callTool({ name: 'rich__structured', arguments: {} });
    expect(good).toEqual({ content: [{ type: 'text', text: 'n is 1' }], structuredContent: { n: 1 }, isError: false });
    const missing = await capable.client.callTool({ name: 'rich__structured', arguments: { with: false } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('has content but no structuredContent');
  });

  it('sampling: the function gets the client reply to sampling/createMessage, with its params passed as sent', async () => {
    const before = asked.sampling.length;
    const result = await capable.client.callTool({ name: 'ask__sample', arguments: { prompt: 'say hi' } });
    expect(JSON.parse(textOf(result))).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'echo: say hi' },
      model: 'fake-model',
      stopReason: 'endTurn',
    });
    expect(asked.sampling.slice(before)).toEqual([
      { messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }], maxTokens: 64, systemPrompt: 'be brief' },
    ]);
  });

  it('elicitation: defaults and every enum form reach the client as written; the accepted content comes back', async () => {
    const before = asked.elicitation.length;
    const result = await capable.client.callTool({ name: 'ask__elicit', arguments: {} });
    expect(JSON.parse(textOf(result))).toEqual({
      action: 'accept',
      content: { name: 'Jane', age: 41, score: 88, verified: false, status: 'inactive', many: ['p'] },
    });
    const [params] = asked.elicitation.slice(before);
    expect(params.message).toBe('Check your details');
    expect(params.requestedSchema).toEqual(FORM_SCHEMA);
    const url = await capable.client.callTool({ name: 'ask__elicit', arguments: { mode: 'url' } });
    expect(JSON.parse(textOf(url))).toEqual({ action: 'accept' });
    expect(asked.elicitation.at(-1)).toMatchObject({ mode: 'url', url: 'https://example.com/login', elicitationId: 'e-1' });
  });

  it('a client that did not declare sampling or elicitation is not asked: the function gets a clear refusal', async () => {
    const sampling = JSON.parse(textOf(await bare.client.callTool({ name: 'ask__sample', arguments: { prompt: 'x' } })));
    expect(sampling).toEqual({
      code: 'CLIENT_CAPABILITY_MISSING',
      error: 'the MCP client did not declare the "sampling" capability, so it cannot be asked for sampling/createMessage',
    });
    const elicitation = JSON.parse(textOf(await bare.client.callTool({ name: 'ask__elicit', arguments: {} })));
    expect(elicitation).toEqual({
      code: 'CLIENT_CAPABILITY_MISSING',
      error: 'the MCP client did not declare the "elicitation" capability, so it cannot be asked for elicitation/create (form mode)',
    });
  });

  it('a token that names no call in flight is refused', async () => {
    const stale = JSON.parse(textOf(await capable.client.callTool({ name: 'ask__stale_token', arguments: {} })));
    expect(stale).toEqual({
      code: 'NOT_FOUND',
      error: 'unknown or finished call token: the tool call this token belonged to has ended',
    });
  });
});

describe('a client with form elicitation only', () => {
  it('is refused url mode by name, and still answers form mode', async () => {
    const client = await httpClient(http.url, { capabilities: { elicitation: {} } });
    try {
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
      const url = JSON.parse(textOf(await client.callTool({ name: 'ask__elicit', arguments: { mode: 'url' } })));
      expect(url).toEqual({
        code: 'CLIENT_CAPABILITY_MISSING',
        error: 'the MCP client did not declare the "elicitation.url" capability, so it cannot be asked for elicitation/create (url mode)',
      });
      const form = JSON.parse(textOf(await client.callTool({ name: 'ask__elicit', arguments: {} })));
      expect(form).toEqual({ action: 'decline' });
    } finally {
      await client.close();
    }
  });
});
