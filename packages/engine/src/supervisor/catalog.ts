/**
 * External workers `eng worker add <name>` knows: what they are and the config block written for
 * them. The supervisor resolves how to launch each one.
 */
export interface CatalogEntry {
  name: string;
  description: string;
  defaultConfig: Record<string, unknown>;
  /**
   * How the engine learns that the worker serves and where: the function it registers once it is
   * up, and where its URL comes from — the `url` field of that function's result (`status`), or
   * the engine's HTTP trigger address plus a path (`http`).
   */
  readiness?: { functionId: string; url: { from: 'status' } | { from: 'http'; path: string }; label: string };
  /** The worker may hand accepted bus connections to the engine over an IPC channel (console `/ws`). */
  busHandoff?: boolean;
}

export const WORKER_CATALOG: readonly CatalogEntry[] = [
  {
    name: 'console',
    description: 'web console on one port: UI, trace explorer, /ws proxy',
    defaultConfig: { http_port: 3113 },
    readiness: { functionId: 'console::status', url: { from: 'status' }, label: 'web console' },
    busHandoff: true,
  },
  {
    name: 'mcp',
    description: 'MCP surface: exposes opted-in functions to MCP clients over Streamable HTTP',
    defaultConfig: { no_stdio: true },
    readiness: { functionId: 'mcp::http', url: { from: 'http', path: '/mcp' }, label: 'MCP over Streamable HTTP' },
  },
  { name: 'harness', description: 'chat stack: sessions, model router, context, approvals', defaultConfig: {} },
  { name: 'worktree', description: 'git worktree worker', defaultConfig: {} },
];

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return WORKER_CATALOG.find((entry) => entry.name === name);
}
