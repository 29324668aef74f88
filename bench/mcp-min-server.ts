/**
 * bench/mcp — the smallest MCP server over stdio on the official SDK: `initialize`, `ping` and a
 * `tools/call` answered with the arguments as pretty JSON text (the shape and size of eng-mcp's
 * answer).
 *
 * Without arguments it answers at once, no engine behind it: what the MCP SDK's server side and the
 * stdio hop cost a tools/call before any function runs.
 *
 * With `--engine <bus url>` its tools/call makes eng-mcp's engine call, `engine::functions::invoke`
 * of `bench::echo` (the exposure re-check and the call in one step) through @eng/sdk, and answers
 * with the function's result: the least any MCP server on the official SDK can do to serve this tool
 * from the engine, in the same three-process chain as eng-mcp (client → server → engine → worker).
 */
import { connect } from '@eng/sdk';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const at = process.argv.indexOf('--engine');
const engineUrl = at === -1 ? undefined : process.argv[at + 1];
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
await server.connect(new StdioServerTransport());
