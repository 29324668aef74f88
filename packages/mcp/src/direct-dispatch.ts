import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

// The SDK's Protocol.connect wraps `transport.onmessage` with three zod passes per message
// (result response? error response? request?) before it picks the handler: the two failed parses
// of every request were a tenth of eng-mcp's own CPU per tools/call. Our transports classify each
// message by hand already (jsonrpc.ts `classify`, never more lenient than the SDK's schemas), so a
// message they recognised goes straight to the handler the SDK would have picked. Anything else
// (responses to our own requests, messages only the SDK's schema pass accepts) still goes through
// `onmessage`, as does everything when the SDK no longer has these methods.

export interface DirectDispatch {
  request(message: JSONRPCRequest): void;
  notification(message: JSONRPCNotification): void;
}

interface ProtocolInternals {
  _onrequest?: (request: JSONRPCRequest, extra?: unknown) => void;
  _onnotification?: (notification: JSONRPCNotification) => void;
}

/** The SDK Protocol's own request and notification entry points, when this SDK version has them. */
export function directDispatch(protocol: object): DirectDispatch | undefined {
  const internals = protocol as ProtocolInternals;
  if (typeof internals._onrequest !== 'function' || typeof internals._onnotification !== 'function') return undefined;
  return {
    request: internals._onrequest.bind(protocol),
    notification: internals._onnotification.bind(protocol),
  };
}
