/**
 * bench/mcp — the smallest MCP server over stdio on the official SDK: `initialize`, `ping` and a
 * `tools/call` answered at once with the arguments as pretty JSON text (the shape and size of
 * eng-mcp's answer), no engine behind it. What the MCP SDK's server side and the stdio hop cost a
 * tools/call before any function runs: the floor of eng-mcp's own share.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'bench-min', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'echo', description: 'Echo the arguments', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? null, null, 2) }],
  isError: false,
}));
await server.connect(new StdioServerTransport());
