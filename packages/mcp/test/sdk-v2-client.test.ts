/**
 * The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) against eng-mcp over
 * stdio and Streamable HTTP, in each version-negotiation mode: `legacy` (the 2025-11-25 initialize
 * handshake), `auto` (probes with server/discover, which eng-mcp answers, so it goes 2026-07-28)
 * and pinned `2026-07-28`. Every capability in a test each: tools, progress, logging, sampling,
 * elicitation, roots, resources, prompts, completion. Fixtures: the conformance workers.
 */
import type { EngClient } from '@eng/sdk';
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { conformanceWorker } from './conformance-fixtures.ts';
import { conformanceWorker2026 } from './conformance-fixtures-2026.ts';
import { type HttpMcp, httpMcp, MCP_BIN, startMcpEngine, textOf } from './helpers.ts';

type Mode = 'legacy' | 'auto' | { pin: string };
const MODES: Array<[string, Mode, string]> = [
  ['legacy', 'legacy', '2025-11-25'],
  ['auto', 'auto', '2026-07-28'],
  ['pinned 2026-07-28', { pin: '2026-07-28' }, '2026-07-28'],
];
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';

let engine: EngineProcess;
let workers: EngClient[] = [];
let http: HttpMcp;

beforeAll(async () => {
  engine = await startMcpEngine();
  workers = [await conformanceWorker(engine), await conformanceWorker2026(engine)];
  http = await httpMcp(engine);
}, 120_000);
afterAll(async () => {
  await http?.stop();
  for (const worker of workers) await worker.close();
  await engine?.stop();
});

interface Connected {
  client: Client;
  logs: Array<{ level: string; data: unknown }>;
  version(): string | undefined;
}

async function connectV2(transport: 'stdio' | 'http', mode: Mode): Promise<Connected> {
  const logs: Connected['logs'] = [];
  const options = {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
    versionNegotiation: { mode },
  } as ClientOptions;
  const client = new Client({ name: 'eng-mcp-v2-test', version: '1.0.0' }, options);
  client.setRequestHandler('sampling/createMessage', async (request) => {
    const first = request.params.messages[0]?.content as { text?: string } | undefined;
    return { role: 'assistant', content: { type: 'text', text: `echo: ${first?.text ?? ''}` }, model: 'test-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { username: 'ada', email: 'ada@example.com', name: 'Ada' },
  }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
  client.setNotificationHandler('notifications/message', (notification) => {
    logs.push({ level: notification.params.level, data: notification.params.data });
  });
  const t =
    transport === 'http'
      ? new StreamableHTTPClientTransport(new URL(http.url))
      : new StdioClientTransport({
          command: process.execPath,
          args: [MCP_BIN, '--engine-url', engine.busUrl],
          env: { ...(process.env as Record<string, string>), ENG_WORKER_CONFIG: '' },
          stderr: 'ignore',
        });
  await client.connect(t);
  const version = () => (client as unknown as { getNegotiatedProtocolVersion?: () => string }).getNegotiatedProtocolVersion?.();
  return { client, logs, version };
}

for (const transport of ['stdio', 'http'] as const) {
  for (const [label, mode, expected] of MODES) {
    describe(`SDK v2 client, ${transport}, ${label}`, () => {
      let c: Connected;
      beforeAll(async () => {
        c = await connectV2(transport, mode);
      }, 60_000);
      afterAll(async () => {
        await c?.client.close();
      });

      it(`speaks ${expected} and lists and calls tools`, async () => {
        expect(c.version()).toBe(expected);
        const { tools } = await c.client.listTools();
        expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['test_simple_text', 'test_sampling', 'greet']));
        const result = await c.client.callTool({ name: 'test_simple_text', arguments: {} });
        expect(textOf(result)).toBe('This is a simple text response for testing.');
        await expect(c.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
      });

      it('reports progress', async () => {
        const seen: number[] = [];
        const result = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
          onprogress: (p: { progress: number }) => seen.push(p.progress),
        } as never);
        expect(textOf(result)).toContain('progress executed successfully');
        expect(seen).toEqual([0, 50, 100]);
      });

      it('delivers log messages at the level asked for', async () => {
        c.logs.length = 0;
        if (expected === '2026-07-28') {
          await c.client.callTool({ name: 'test_tool_with_logging', arguments: {}, _meta: { [LOG_LEVEL_META]: 'info' } } as never);
        } else {
          await c.client.setLoggingLevel('info');
          await c.client.callTool({ name: 'test_tool_with_logging', arguments: {} });
        }
        expect(c.logs.map((l) => l.data)).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
      });

      it('answers sampling, elicitation and roots requests of a function', async () => {
        const sampled = await c.client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
        expect(textOf(sampled)).toBe('LLM response: echo: hello');
        const elicited = await c.client.callTool({ name: 'test_elicitation', arguments: { message: 'who?' } });
        expect(textOf(elicited)).toContain('action=accept');
        expect(textOf(elicited)).toContain('ada@example.com');
        const roots = await c.client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} });
        expect(textOf(roots)).toBe('roots: file:///work');
      });

      it('reads resources and templates', async () => {
        const { resources } = await c.client.listResources();
        expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['eng://functions', 'test://static-text']));
        const read = await c.client.readResource({ uri: 'test://static-text' });
        expect((read.contents[0] as { text?: string }).text).toContain('static');
        const { resourceTemplates } = await c.client.listResourceTemplates();
        expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('test://template/{id}/data');
        const templated = await c.client.readResource({ uri: 'test://template/42/data' });
        expect(JSON.stringify(templated.contents)).toContain('42');
        await expect(c.client.readResource({ uri: 'test://missing' })).rejects.toThrow(
          expected === '2026-07-28' ? /-32602|not found/i : /-32002|not found/i,
        );
      });

      it('renders prompts and completes their arguments', async () => {
        const { prompts } = await c.client.listPrompts();
        expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['register-function', 'test_simple_prompt']));
        const rendered = await c.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
        expect(JSON.stringify(rendered.messages)).toContain('a');
        const completion = await c.client.complete({
          ref: { type: 'ref/prompt', name: 'register-function' },
          argument: { name: 'language', value: 'n' },
        });
        expect(completion.completion.values).toEqual(['node']);
      });
    });
  }
}
