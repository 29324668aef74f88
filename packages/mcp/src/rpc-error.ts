import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

// A JSON-RPC error a handler throws. The SDK's `McpError` writes "MCP error <code>: " into its own
// message, which then travels as the error's `message`, and the client's McpError adds the prefix
// again ("MCP error -32602: MCP error -32602: Unknown tool"). This one carries the plain text: the
// SDK answers `{code, message, data?}` from any thrown error with a numeric `code`.

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export { ErrorCode };
