import { ErrorCode, RpcError } from './rpc-error.ts';

// spec: MCP 2025-06-18 utilities/pagination — opaque cursors; an invalid cursor is -32602
// (mcp.md §19: the reference silently restarted from the top).

export const PAGE_SIZE = 50;

type ListKind = 'tools' | 'resources' | 'prompts' | 'templates' | 'skills' | 'directory';

function encode(kind: ListKind, offset: number): string {
  return Buffer.from(JSON.stringify({ k: kind, o: offset })).toString('base64url');
}

function decode(kind: ListKind, cursor: unknown): number {
  if (cursor === undefined || cursor === null) return 0;
  if (typeof cursor !== 'string' || cursor === '') throw new RpcError(ErrorCode.InvalidParams, 'Invalid cursor');
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown; o?: unknown };
    if (parsed.k === kind && typeof parsed.o === 'number' && Number.isInteger(parsed.o) && parsed.o >= 0) return parsed.o;
  } catch {
    // fall through
  }
  throw new RpcError(ErrorCode.InvalidParams, 'Invalid cursor');
}

/** One page of `items` from the cursor; `nextCursor` only while more items remain. */
export function paginate<T>(kind: ListKind, items: T[], cursor: unknown, pageSize = PAGE_SIZE): { page: T[]; nextCursor?: string } {
  const offset = decode(kind, cursor);
  const page = items.slice(offset, offset + pageSize);
  const next = offset + pageSize;
  return next < items.length ? { page, nextCursor: encode(kind, next) } : { page };
}
