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
  /** Catalog workers `eng worker add <name>` configures (and `remove` removes) together with this one. */
  installs?: readonly string[];
}

/** The chat stack (packages/harness): one worker per role, run by `eng-chat <role>`. */
export const CHAT_STACK = [
  'session-manager',
  'approval-gate',
  'llm-router',
  'provider-openai',
  'provider-anthropic',
  'context-manager',
] as const;

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
  {
    name: 'harness',
    description: 'chat turn loop; `eng worker add harness` adds the whole chat stack',
    defaultConfig: {},
    installs: CHAT_STACK,
  },
  { name: 'session-manager', description: 'chat session store: session::* (part of the chat stack)', defaultConfig: {} },
  { name: 'approval-gate', description: 'approval gate for function calls: approval::* (part of the chat stack)', defaultConfig: {} },
  { name: 'llm-router', description: 'model router and catalog: router::* (part of the chat stack)', defaultConfig: {} },
  { name: 'provider-openai', description: 'OpenAI-compatible model provider (part of the chat stack)', defaultConfig: {} },
  { name: 'provider-anthropic', description: 'Anthropic model provider (part of the chat stack)', defaultConfig: {} },
  { name: 'context-manager', description: 'context budgeting and compaction: context::* (part of the chat stack)', defaultConfig: {} },
  { name: 'worktree', description: 'git worktrees for parallel agents: claims, land queue', defaultConfig: {} },
];

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return WORKER_CATALOG.find((entry) => entry.name === name);
}
