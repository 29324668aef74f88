import { redactText } from '@eng/protocol';

// spec: mcp.md §6 result helpers — one text content item; failures as `isError: true` results.

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
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
