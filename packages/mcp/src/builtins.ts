import type { ToolDefinition } from './tool-schema.ts';

// spec: seed §2.12 and §4.3 rule 3, mcp.md §7 (schemas, with our names) — the six management tools.

export type Transport = 'stdio' | 'http';

export const BUILTIN_NAMES = [
  'eng_worker_register',
  'eng_worker_stop',
  'eng_trigger_register',
  'eng_trigger_unregister',
  'eng_trigger_void',
  'eng_trigger_enqueue',
] as const;
export type BuiltinName = (typeof BUILTIN_NAMES)[number];

/** Tools that act on this process's own children or engine connection: stdio only (seed §4.4, last line). */
export const STDIO_ONLY: ReadonlySet<string> = new Set([
  'eng_worker_register',
  'eng_worker_stop',
  'eng_trigger_register',
  'eng_trigger_unregister',
]);

export function isBuiltin(name: string): name is BuiltinName {
  return (BUILTIN_NAMES as readonly string[]).includes(name);
}

export interface BuiltinVisibility {
  noBuiltins: boolean;
  httpBuiltins: boolean;
}

/** Shown on stdio unless --no-builtins; on HTTP only with --http-builtins; --no-builtins always wins. */
export function builtinsVisible(transport: Transport, flags: BuiltinVisibility): boolean {
  if (flags.noBuiltins) return false;
  return transport === 'stdio' || flags.httpBuiltins;
}

/** Why a built-in cannot run here, as the isError text; undefined when it can. */
export function builtinRefusal(name: BuiltinName, transport: Transport, flags: BuiltinVisibility): string | undefined {
  if (flags.noBuiltins) return `Tool '${name}' is disabled on this server (--no-builtins is set)`;
  if (transport === 'http' && !flags.httpBuiltins) {
    return `Tool '${name}' is disabled on this server over HTTP (start eng-mcp with --http-builtins to enable it)`;
  }
  if (transport === 'http' && STDIO_ONLY.has(name)) {
    return 'This tool requires stdio transport (worker/trigger management is not available over HTTP)';
  }
  return undefined;
}

const str = (description: string) => ({ type: 'string', description });

export const BUILTIN_TOOLS: Record<BuiltinName, ToolDefinition> = {
  eng_worker_register: {
    name: 'eng_worker_register',
    title: 'Register a worker',
    description:
      'Register a new worker (Node.js or Python): spawns a process that connects to the eng engine and registers one ' +
      'function with metadata {"mcp.expose": true}, so it appears as a tool (function id ns::name → tool ns__name). ' +
      'node: `code` is a JavaScript expression evaluating to the handler, e.g. `async (input, ctx) => ({ ok: true })`. ' +
      'python: `code` is Python source that defines `handler`, e.g. `async def handler(input):\\n    return {"ok": True}`.',
    inputSchema: {
      type: 'object',
      properties: {
        language: { type: 'string', enum: ['node', 'python'], description: 'runtime of the worker' },
        code: str('handler source (see the tool description)'),
        function_name: str('function id to register, e.g. "myservice::process"'),
        description: str('description of the function (shown as the tool description)'),
      },
      required: ['language', 'code', 'function_name'],
      additionalProperties: false,
    },
    annotations: { title: 'Register a worker', readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  eng_worker_stop: {
    name: 'eng_worker_stop',
    title: 'Stop a worker',
    description: 'Stop a worker started by eng_worker_register, remove its files and unregister its function.',
    inputSchema: {
      type: 'object',
      properties: { id: str('worker id returned by eng_worker_register (worker-<uuid>)') },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { title: 'Stop a worker', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  eng_trigger_register: {
    name: 'eng_trigger_register',
    title: 'Attach a trigger',
    description:
      'Attach an http, cron or queue trigger to an exposed function. Examples: ' +
      '{"trigger_type":"http","function_id":"api::users","config":{"api_path":"users","http_method":"GET"}}; ' +
      '{"trigger_type":"cron","function_id":"jobs::nightly","config":{"expression":"0 0 3 * * *"}} (seconds first); ' +
      '{"trigger_type":"durable:subscriber","function_id":"orders::ship","config":{"topic":"order.created"}}. ' +
      'The trigger lives as long as this eng-mcp process.',
    inputSchema: {
      type: 'object',
      properties: {
        trigger_type: str('trigger type: http, cron, durable:subscriber, subscribe, state, …'),
        function_id: str('function to fire (ns::name or the tool name ns__name)'),
        config: { type: 'object', description: 'trigger configuration, depends on the type' },
      },
      required: ['trigger_type', 'function_id', 'config'],
      additionalProperties: false,
    },
    annotations: { title: 'Attach a trigger', readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  eng_trigger_unregister: {
    name: 'eng_trigger_unregister',
    title: 'Detach a trigger',
    description: 'Detach a trigger attached by eng_trigger_register.',
    inputSchema: {
      type: 'object',
      properties: { id: str('trigger id returned by eng_trigger_register') },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { title: 'Detach a trigger', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  eng_trigger_void: {
    name: 'eng_trigger_void',
    title: 'Fire and forget',
    description: 'Fire-and-forget invocation of an exposed function: returns at once, the function runs on its own.',
    inputSchema: {
      type: 'object',
      properties: {
        function_id: str('function to invoke (ns::name or the tool name ns__name)'),
        payload: { type: 'object', description: 'input of the function (default {})' },
      },
      required: ['function_id', 'payload'],
      additionalProperties: false,
    },
    annotations: { title: 'Fire and forget', readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  eng_trigger_enqueue: {
    name: 'eng_trigger_enqueue',
    title: 'Enqueue',
    description: 'Enqueue an invocation of an exposed function on a named queue (durable, retried); returns {"messageReceiptId"}.',
    inputSchema: {
      type: 'object',
      properties: {
        function_id: str('function to invoke (ns::name or the tool name ns__name)'),
        payload: { type: 'object', description: 'input of the function' },
        queue: str('queue name (default "default")'),
      },
      required: ['function_id', 'payload'],
      additionalProperties: false,
    },
    annotations: { title: 'Enqueue', readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
};
