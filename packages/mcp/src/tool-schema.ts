import { type FunctionRow, toolName } from './exposure.ts';

// spec: mcp.md §5 and §10, MCP 2025-06-18+ tools — an engine function as an MCP tool.

export interface ToolDefinition {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  execution?: { taskSupport: 'optional' | 'required' };
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Protocol revisions that know `title`, `outputSchema` and `structuredContent` (2025-06-18 and later). */
export function supportsStructuredTools(protocolVersion: string | undefined): boolean {
  return protocolVersion === undefined || protocolVersion >= '2025-06-18';
}

/**
 * How `arguments` reach the function. MCP arguments are always an object, so a function whose
 * `request_format` describes something else (a string, an array…) gets it wrapped as `{input}`.
 */
export type InputMapping = 'direct' | 'wrapped';

function acceptsObject(schema: JsonObject): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  if (type === 'object') return true;
  return Array.isArray(type) && type.includes('object');
}

export function inputMapping(requestFormat: unknown): InputMapping {
  if (!isObject(requestFormat)) return 'direct';
  return acceptsObject(requestFormat) ? 'direct' : 'wrapped';
}

/** `request_format` → an `inputSchema` whose top level is `type: "object"` (SDK clients reject anything else). */
export function inputSchemaOf(requestFormat: unknown): JsonObject {
  if (!isObject(requestFormat)) return { type: 'object', properties: {} };
  if (!acceptsObject(requestFormat)) {
    return { type: 'object', properties: { input: requestFormat }, required: ['input'], additionalProperties: false };
  }
  return { ...requestFormat, type: 'object' };
}

/** `response_format` becomes an `outputSchema` only when it describes an object (MCP requires it). */
export function outputSchemaOf(responseFormat: unknown): JsonObject | undefined {
  if (!isObject(responseFormat) || responseFormat.type !== 'object') return undefined;
  return responseFormat;
}

const HINTS: Array<[string, string]> = [
  ['read_only_hint', 'readOnlyHint'],
  ['destructive_hint', 'destructiveHint'],
  ['idempotent_hint', 'idempotentHint'],
  ['open_world_hint', 'openWorldHint'],
];

/** mcp.md §10: title and hints live under the nested `metadata.mcp` object. */
function annotationsOf(metadata: JsonObject | null | undefined): { title?: string; annotations?: JsonObject } {
  const nested = metadata?.mcp;
  if (!isObject(nested)) return {};
  const annotations: JsonObject = {};
  const title = typeof nested.title === 'string' && nested.title !== '' ? nested.title : undefined;
  if (title) annotations.title = title;
  for (const [key, name] of HINTS) if (typeof nested[key] === 'boolean') annotations[name] = nested[key];
  return { title, annotations: Object.keys(annotations).length ? annotations : undefined };
}

export function toolOf(row: FunctionRow, protocolVersion?: string): ToolDefinition {
  const { title, annotations } = annotationsOf(row.metadata);
  const description =
    typeof row.description === 'string' && row.description.trim() !== '' ? row.description : `Function ${row.function_id}`;
  const tool: ToolDefinition = { name: toolName(row.function_id), description, inputSchema: inputSchemaOf(row.request_format) };
  const structured = supportsStructuredTools(protocolVersion);
  if (title && structured) tool.title = title;
  const outputSchema = outputSchemaOf(row.response_format);
  if (outputSchema && structured) tool.outputSchema = outputSchema;
  if (annotations) tool.annotations = annotations;
  // the tasks extension is a 2026-07-28 one: older sessions are not told (they would expect 2025 tasks)
  const task = row.metadata?.['mcp.task'];
  if (task !== undefined && task !== false && protocolVersion !== undefined && protocolVersion >= '2026-07-28') {
    const required = task === 'required' || (isObject(task) && task.support === 'required');
    tool.execution = { taskSupport: required ? 'required' : 'optional' };
  }
  return tool;
}

export { validateAgainst } from './json-schema.ts';
