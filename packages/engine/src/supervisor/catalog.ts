/**
 * External workers `eng worker add <name>` knows: what they are and the config block written for
 * them. The supervisor resolves how to launch each one.
 */
export interface CatalogEntry {
  name: string;
  description: string;
  defaultConfig: Record<string, unknown>;
}

export const WORKER_CATALOG: readonly CatalogEntry[] = [
  { name: 'console', description: 'web console on one port: UI, trace explorer, /ws proxy', defaultConfig: { http_port: 3113 } },
  {
    name: 'mcp',
    description: 'MCP surface: exposes opted-in functions to MCP clients over Streamable HTTP',
    defaultConfig: { no_stdio: true },
  },
  { name: 'harness', description: 'chat stack: sessions, model router, context, approvals', defaultConfig: {} },
  { name: 'worktree', description: 'git worktree worker', defaultConfig: {} },
];

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return WORKER_CATALOG.find((entry) => entry.name === name);
}
