/**
 * bench/mcp — the smallest MCP server on the official SDK: `initialize`, `ping` and a `tools/call`
 * answered with the arguments as pretty JSON text (the shape and size of eng-mcp's answer).
 *
 *   node --import tsx bench/mcp-min-server.ts                          over stdio, no engine
 *   node --import tsx bench/mcp-min-server.ts --engine <bus url>       over stdio, calls the engine
 *   node --import tsx bench/mcp-min-server.ts --engine <bus url> --http <path>
 *                                            on the engine's HTTP port (POST /<path>), calls the engine;
 *                                            prints "mcp-min-server: ready" (stdout carries no MCP then)
 *
 * Without an engine it answers at once: what the MCP SDK's server side and the stdio hop cost a
 * tools/call before any function runs.
 *
 * With `--engine` its tools/call makes eng-mcp's engine call, `engine::functions::invoke` of
 * `bench::echo` (the exposure re-check and the call in one step) through @eng/sdk, and answers with
 * the function's result: the least any MCP server on the official SDK can do to serve this tool from
 * the engine, in eng-mcp's place (client → server → engine → worker). With `--http` it sits where the
 * seed puts eng-mcp's Streamable HTTP: an HTTP trigger on the engine's HTTP port, each POST one
 * JSON-RPC message answered as JSON, no session, no event stream.
 */
import { connect } from '@eng/sdk';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, type JSONRPCMessage, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const option = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const engineUrl = option('--engine');
const httpPath = option('--http');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const engine = engineUrl ? connect(engineUrl, { name: 'bench-mcp-min', logger: quiet }) : undefined;
await engine?.ready();

const server = new Server({ name: 'bench-min', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'echo', description: 'Echo the arguments', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? null;
  const value = engine
    ? await engine.trigger({
        function_id: 'engine::functions::invoke',
        payload: { function_id: 'bench::echo', payload: args, expect: { metadata: { 'mcp.expose': true } } },
      })
    : args;
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], isError: false };
});

/** One SDK server behind an HTTP trigger: a POSTed request is answered by the response the server sends for its id. */
class TriggerTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly waiting = new Map<string | number, (message: JSONRPCMessage) => void>();
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && message.id !== undefined && !('method' in message)) {
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    }
  }
  handle(body: unknown): Promise<{ status_code: number; headers?: Record<string, string>; body: unknown }> {
    const message = (typeof body === 'string' ? JSON.parse(body) : body) as JSONRPCMessage;
    if (!('id' in message) || message.id === undefined) {
      this.onmessage?.(message);
      return Promise.resolve({ status_code: 202, body: null });
    }
    const answered = new Promise<JSONRPCMessage>((resolve) => this.waiting.set(message.id as string | number, resolve));
    this.onmessage?.(message);
    return answered.then((response) => ({
      status_code: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(response),
    }));
  }
}

if (httpPath && engine) {
  const transport = new TriggerTransport();
  await server.connect(transport);
  engine.registerFunction('bench::mcp_min', (req: { body?: unknown }) => transport.handle(req.body));
  engine.registerTrigger({ type: 'http', function_id: 'bench::mcp_min', config: { api_path: httpPath, http_method: 'POST' } });
  await engine.ready();
  process.stdout.write('mcp-min-server: ready\n');
} else {
  await server.connect(new StdioServerTransport());
}
