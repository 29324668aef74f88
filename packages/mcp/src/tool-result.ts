import { redactText } from '@eng/protocol';
import { ContentBlockSchema } from '@modelcontextprotocol/sdk/types.js';

// spec: mcp.md §6 result helpers — one text content item; failures as `isError: true` results.
// A function may also answer with MCP content of its own (text, image, audio, resource_link,
// embedded resource): `{content: [...]}`, passed through as it is (see `richResult`).

export type ContentBlock = Record<string, unknown> & { type: string };

export interface ToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** Strings go out as they are; everything else as pretty JSON (undefined reads as null). */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value ?? null, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

export function ok(value: unknown, structured?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text: textOf(value) }], isError: false };
  if (structured) result.structuredContent = structured;
  return result;
}

export function fail(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The keys an MCP tool result may carry besides `content`. */
const RESULT_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);

/** Whether every item is an MCP content block (text, image, audio, resource_link, embedded resource). */
export function contentBlocks(items: unknown): items is ContentBlock[] {
  return Array.isArray(items) && items.every((item) => isObject(item) && ContentBlockSchema.safeParse(item).success);
}

/**
 * A function result that is already an MCP tool result: an object with a `content` array of valid
 * content blocks and nothing but `structuredContent` (an object), `isError` (a boolean) and
 * `_meta` (an object) besides. Anything else (a `content` that is not all blocks, other keys)
 * is ordinary data and goes out as JSON text. Cheap for ordinary results: the blocks are only
 * checked when the shape matches.
 */
export function richResult(value: unknown): ToolResult | undefined {
  if (!isObject(value) || !Array.isArray(value.content)) return undefined;
  for (const key in value) if (!RESULT_KEYS.has(key)) return undefined;
  if (value.structuredContent !== undefined && !isObject(value.structuredContent)) return undefined;
  if (value.isError !== undefined && typeof value.isError !== 'boolean') return undefined;
  if (value._meta !== undefined && !isObject(value._meta)) return undefined;
  if (!contentBlocks(value.content)) return undefined;
  return { ...value, isError: value.isError === true } as ToolResult;
}

/** An engine or SDK failure as the tool's error text (mcp.md §6 step 9, with our wording). */
export function engineFailureText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  // SDK errors may quote the engine URL: a client never sees its credentials
  const message = redactText(err instanceof Error ? err.message : String(err));
  if (code === 'TIMEOUT') return `Error: invocation timed out: ${message}`;
  if (code === 'not_connected') return `Error: eng engine is not connected: ${message}`;
  if (typeof code === 'string') return `Error: remote error (${code}): ${message}`;
  return `Error: ${message}`;
}
