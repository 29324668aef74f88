import { toolName } from './exposure.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';

// spec: seed §2.13, mcp.md §9 — four canned prompts that teach a model to build on eng with our
// SDK and our built-in tool names. Missing required arguments are -32602 (MCP server/prompts).

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  render(args: Record<string, string>): string;
}

const fence = (lang: string, code: string) => `\`\`\`${lang}\n${code}\n\`\`\``;

function registerFunction(args: Record<string, string>): string {
  const fid = args.function_id as string;
  const language = (args.language as string).toLowerCase();
  const tool = toolName(fid);
  if (language === 'node' || language === 'javascript' || language === 'js') {
    return [
      `Register the eng function \`${fid}\` in Node.js and expose it to MCP clients as the tool \`${tool}\`.`,
      '',
      'Quick way, from this MCP session:',
      `1. Call \`eng_worker_register\` with language="node", function_name="${fid}", a description, and code that is a JavaScript expression evaluating to the handler, for example \`async (input, ctx) => ({ received: input })\`.`,
      `2. The function is registered with metadata {"mcp.expose": true}; call \`tools/list\` and the tool \`${tool}\` is there. Call it with its arguments as an object.`,
      '3. Optionally wire a trigger with `eng_trigger_register` (http, cron or durable:subscriber). Stop the worker with `eng_worker_stop`.',
      '',
      'In a project of your own, with the @eng/sdk package:',
      fence(
        'js',
        [
          "import { connect } from '@eng/sdk';",
          '',
          "const client = connect(process.env.ENG_URL ?? 'ws://127.0.0.1:49134', { name: 'my-service' });",
          `client.registerFunction('${fid}', async (input, ctx) => {`,
          '  // input is the tool call arguments object; return any JSON value',
          '  return { ok: true, input };',
          '}, {',
          "  description: 'What this function does (shown as the tool description)',",
          "  request_format: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },",
          "  metadata: { 'mcp.expose': true },",
          '});',
          'await client.ready();',
        ].join('\n'),
      ),
      'Without `"mcp.expose": true` the function stays invisible to MCP clients. Ids under engine::, state::, stream::, eng., eng::, mcp:: and a2a::, the chat control plane (approval::, configuration::, harness::, session::, router::, provider::, context::) and functions marked `"internal": true` are never exposed.',
    ].join('\n');
  }
  if (language === 'python' || language === 'py') {
    return [
      `Register the eng function \`${fid}\` in Python and expose it to MCP clients as the tool \`${tool}\`.`,
      '',
      `1. Call \`eng_worker_register\` with language="python", function_name="${fid}", a description, and code that defines the handler, for example:`,
      fence(
        'python',
        'async def handler(input):\n    # input is the tool call arguments (a dict); return any JSON value\n    return {"ok": True, "input": input}',
      ),
      '   The worker runs on a small standard-library client (no packages to install) and registers the function with metadata {"mcp.expose": True}.',
      `2. Call \`tools/list\`: the tool \`${tool}\` is there. Call it with its arguments as an object.`,
      '3. Optionally wire a trigger with `eng_trigger_register` (http, cron or durable:subscriber). Stop the worker with `eng_worker_stop`.',
      '',
      'A handler may take a second argument, the call metadata: `async def handler(input, metadata)`.',
    ].join('\n');
  }
  throw new RpcError(ErrorCode.InvalidParams, `Unsupported language \`${args.language}\`. Pass \`language=node\` or \`language=python\`.`);
}

function buildApi(args: Record<string, string>): string {
  const method = (args.method as string).toUpperCase();
  const path = (args.path as string).replace(/^\/+/, '');
  const fid = args.function_id || 'api::handler';
  const trigger = { trigger_type: 'http', function_id: fid, config: { api_path: path, http_method: method } };
  return [
    `Expose the eng function \`${fid}\` as the HTTP endpoint ${method} /${path}.`,
    '',
    `1. Register the function (see the register-function prompt, or \`eng_worker_register\`). Its input is the request: \`{ body, query_params, path_params, headers, method, path }\` (path parameters are written \`:name\` in the path, e.g. users/:id).`,
    '   It returns the response: `{ status_code, headers, body }`, for example:',
    fence(
      'js',
      `async (req) => ({ status_code: 200, headers: { 'content-type': 'application/json' }, body: { path: req.path_params, query: req.query_params } })`,
    ),
    '2. Attach the HTTP trigger with `eng_trigger_register`:',
    fence('json', JSON.stringify(trigger, null, 2)),
    `3. The endpoint answers on the engine HTTP port: \`curl -X ${method} http://127.0.0.1:3111/${path}\`.`,
    '   Remove it with `eng_trigger_unregister` and the id it returned.',
  ].join('\n');
}

function setupCron(args: Record<string, string>): string {
  const fid = args.function_id || 'jobs::task';
  const trigger = { trigger_type: 'cron', function_id: fid, config: { expression: args.schedule } };
  return [
    `Run the eng function \`${fid}\` on the schedule \`${args.schedule}\`.`,
    '',
    'eng cron expressions have 6 or 7 fields with seconds first: `sec min hour day-of-month month day-of-week [year]`, evaluated in UTC, day-of-week 1 = Sunday (e.g. `0 */5 * * * *` every five minutes, `0 0 3 * * *` at 03:00, `0 0 9 * * 2-6` weekdays at 09:00). A 5-field crontab line is refused.',
    '1. Register the function (register-function prompt or `eng_worker_register`); each firing calls it with `{ trigger: "cron", job_id, scheduled_time, actual_time }` and its result is ignored.',
    '2. Attach the cron trigger with `eng_trigger_register`:',
    fence('json', JSON.stringify(trigger, null, 2)),
    '3. Use `eng_trigger_unregister` with the returned id to stop the schedule.',
  ].join('\n');
}

function eventPipeline(args: Record<string, string>): string {
  const topic = args.topic || 'order.created';
  return [
    'Build an event-driven pipeline on eng, one function per stage:',
    '',
    `HTTP → Fn A (orders::create) → publish '${topic}' → Fn B (orders::fulfil) → publish 'order.done' → Fn C (orders::notify)`,
    '',
    '1. Register each stage as its own function (`eng_worker_register`, or `client.registerFunction` with @eng/sdk); give the ones a model should call `"mcp.expose": true`.',
    '2. Entry point: an HTTP trigger on Fn A: `eng_trigger_register` with `{ "trigger_type": "http", "function_id": "orders::create", "config": { "api_path": "orders", "http_method": "POST" } }`.',
    `3. Fn A publishes the event: \`await client.call('eng::durable::publish', { topic: '${topic}', data: order })\`.`,
    `4. Fn B subscribes durably (retries, dead-letter queue): \`eng_trigger_register\` with \`{ "trigger_type": "durable:subscriber", "function_id": "orders::fulfil", "config": { "topic": "${topic}" } }\`; it publishes 'order.done' the same way for Fn C.`,
    '5. For one-off asynchronous work use `eng_trigger_enqueue` (a durable queue, returns a messageReceiptId); for fire-and-forget use `eng_trigger_void`.',
    '6. Watch it: read the `eng://triggers` and `eng://functions` resources.',
  ].join('\n');
}

const PROMPTS: PromptDefinition[] = [
  {
    name: 'register-function',
    title: 'Register a function',
    description: 'Guide to register a function on eng and expose it as an MCP tool',
    arguments: [
      { name: 'language', description: 'node or python', required: true },
      { name: 'function_id', description: 'e.g. myservice::process', required: true },
    ],
    render: registerFunction,
  },
  {
    name: 'build-api',
    title: 'Build an HTTP API',
    description: 'Expose a function as HTTP endpoint',
    arguments: [
      { name: 'method', description: 'GET, POST, PUT, DELETE or PATCH', required: true },
      { name: 'path', description: 'e.g. /users or /users/:id', required: true },
      { name: 'function_id', description: 'function to bind (default api::handler)', required: false },
    ],
    render: buildApi,
  },
  {
    name: 'setup-cron',
    title: 'Set up a cron job',
    description: 'Set up a scheduled cron job',
    arguments: [
      { name: 'schedule', description: 'Cron expression (seconds first, e.g. 0 */5 * * * *)', required: true },
      { name: 'function_id', description: 'function to run (default jobs::task)', required: false },
    ],
    render: setupCron,
  },
  {
    name: 'event-pipeline',
    title: 'Build an event pipeline',
    description: 'Build an event-driven pipeline',
    arguments: [{ name: 'topic', description: 'first event topic (default order.created)', required: false }],
    render: eventPipeline,
  },
];

/** The names of eng-mcp's own prompts (a function's prompt cannot take one). */
export const BUILTIN_PROMPT_NAMES: string[] = PROMPTS.map((p) => p.name);

export function isBuiltinPrompt(name: string): boolean {
  return BUILTIN_PROMPT_NAMES.includes(name);
}

export function listPrompts() {
  return PROMPTS.map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args }));
}

export function getPrompt(name: string, args: Record<string, string> | undefined) {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  const values = args ?? {};
  for (const arg of prompt.arguments) {
    if (arg.required && (typeof values[arg.name] !== 'string' || values[arg.name]?.trim() === '')) {
      throw new RpcError(ErrorCode.InvalidParams, `Missing required argument: ${arg.name}`);
    }
  }
  return {
    description: prompt.description,
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text: prompt.render(values) } }],
  };
}

const PROMPT_COMPLETIONS: Record<string, Record<string, string[]>> = {
  'register-function': { language: ['node', 'python'] },
  'build-api': { method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], path: ['/users', '/users/:id', '/orders', '/health'] },
  'setup-cron': { schedule: ['0 * * * * *', '0 */5 * * * *', '0 0 * * * *', '0 0 3 * * *', '0 0 9 * * 2-6'] },
  'event-pipeline': { topic: ['order.created', 'user.signed_up', 'payment.received'] },
};

/** Candidate values of a prompt argument; unknown prompts have none (completion is advisory). */
export function promptCompletions(prompt: string, argument: string): string[] {
  return PROMPT_COMPLETIONS[prompt]?.[argument] ?? [];
}
