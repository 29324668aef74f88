import { createHash } from 'node:crypto';
import { redactText } from '@eng/protocol';

// spec: seed §2.11 and §4.3 rules 1, 2 and 5 — which engine functions become MCP tools, and
// under which names.

/**
 * Prefixes never exposed, whatever the metadata or flags say (seed §4.3 rule 5). The `iii` ones
 * too (mcp.md §2): the engine registers iii aliases of its `eng::` functions (`iii::queue::redrive`),
 * and iii workers' SDK internals use `iii.`. The single definition every path goes through.
 */
export const HARD_FLOOR = ['engine::', 'state::', 'stream::', 'eng.', 'eng::', 'iii.', 'iii::', 'mcp::', 'a2a::'] as const;

/**
 * The chat stack's control plane, floored like the engine's internals (issue 24 item 5: with
 * --expose-all, `configuration__reveal` returned a provider key and `approval__set-mode` changed a
 * session's mode). An MCP client is a caller from outside the chat, so none of it is its to drive:
 * `approval::` decides which calls run and grants trust; `configuration::` reveals secrets and
 * rewrites every worker's settings; `harness::` runs turns in any session, under that session's
 * approval mode, with the deployment's keys; `session::` holds transcripts and attachments (and
 * could write into another session's history); `router::` and `provider::` generate with the
 * deployment's credentials and decide where generation goes; `context::` compacts a session
 * through the router. The cost: a function of one's own in these namespaces is never a tool either.
 */
export const CONTROL_PLANE_FLOOR = [
  'approval::',
  'configuration::',
  'harness::',
  'session::',
  'router::',
  'provider::',
  'context::',
] as const;

/**
 * Engine functions outside the reserved namespaces that call other functions: `publish` runs every
 * subscriber of its topic, `bridge.invoke*` calls any function of another engine. As tools they
 * would carry an MCP client past the floor (a subscriber or a remote function is not checked), so
 * they are floored by their exact ids, like the chat stack's gate refuses to see through them blind.
 */
export const ENGINE_WRAPPERS: ReadonlySet<string> = new Set(['publish', 'bridge.invoke', 'bridge.invoke_async']);

/** The slice of a function listing row the gate looks at. */
export interface FunctionRow {
  function_id: string;
  description?: string | null;
  request_format?: unknown;
  response_format?: unknown;
  metadata?: Record<string, unknown> | null;
}

export interface ExposurePolicy {
  /** `--expose-all`: skip the `mcp.expose` opt-in (the floor still applies). */
  exposeAll: boolean;
  /** `--tier <name>`: only functions whose `"mcp.tier"` equals it. */
  tier?: string;
}

/** Why a function is not a tool; `undefined` means it is one. */
export type Denial = 'floor' | 'not-exposed';

/**
 * What model providers accept as a tool name (OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`), a
 * subset of MCP's own guidance (1-128 of `A-Z a-z 0-9 _ - .`).
 */
const PORTABLE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_TOOL_NAME = 64;

/**
 * Tool name for a function id (seed §4.3 rule 1): every `::` written `__` when that gives a portable
 * name that reverses to the id (`orders::place` → `orders__place`). Otherwise (a literal `__` in the
 * id, characters providers refuse, more than 64 characters) the name is made portable and ends with
 * `_` and 8 hex digits of the id's SHA-256 (`demo::a__b` → `demo__a__b_1f2e3d4c`), so it is
 * deterministic and unique; such names are reversed through the listing (`EngineView.idForTool`).
 */
export function toolName(functionId: string): string {
  const base = functionId.replaceAll('::', '__');
  if (PORTABLE_NAME.test(base) && functionIdOf(base) === functionId) return base;
  const hash = createHash('sha256').update(functionId).digest('hex').slice(0, 8);
  return `${base.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

/** Function id for a plain tool name: every `__` becomes `::` (seed §4.3 rule 4a). */
export function functionIdOf(name: string): string {
  return name.replaceAll('__', '::');
}

/** Floor prefixes as written in an id, in both spellings (`iii::` and `iii__`, `engine::` and `engine__`, …). */
const spellings = (prefixes: readonly string[]): readonly string[] => [...new Set(prefixes.flatMap((p) => [p, p.replaceAll('::', '__')]))];
const ENGINE_SPELLINGS = spellings(HARD_FLOOR);
const CONTROL_PLANE_SPELLINGS = spellings(CONTROL_PLANE_FLOOR);

/** The control-plane prefix `functionId` starts with (as written with `::`), if any. */
function controlPlanePrefix(functionId: string): string | undefined {
  const spelled = CONTROL_PLANE_SPELLINGS.find((prefix) => functionId.startsWith(prefix));
  return spelled?.replace(/__$/, '::');
}

/**
 * In the floor by its id: the real function id starts with a floor prefix (the engine's or the
 * chat control plane's), in either spelling. One check on the id itself, the same on every path
 * (listing, fast and full call path, resources, built-ins): a function literally registered as
 * `iii__x` or `engine__x` is floored like `iii::x`.
 */
export function inHardFloor(functionId: string): boolean {
  return (
    ENGINE_SPELLINGS.some((prefix) => functionId.startsWith(prefix)) ||
    controlPlanePrefix(functionId) !== undefined ||
    ENGINE_WRAPPERS.has(functionId)
  );
}

/**
 * Marked internal (`"internal": true`, the engine's own flag for plumbing: configuration::reveal,
 * config reload hooks, a provider's stream). The engine leaves such functions out of its listing;
 * a call by id still reaches them, so the gate refuses them on the row it reads.
 */
export function markedInternal(metadata: Record<string, unknown> | null | undefined): boolean {
  return metadata?.internal === true;
}

/** A function that defines an MCP resource or prompt (`"mcp.resource"` / `"mcp.prompt"`) is not also a tool. */
export function contributesNonTool(row: FunctionRow): boolean {
  const metadata = row.metadata;
  return metadata != null && (metadata['mcp.resource'] !== undefined || metadata['mcp.prompt'] !== undefined);
}

/**
 * The gate, in the seed's order: floor, then the flat boolean key `"mcp.expose"` (a string "true"
 * or the nested `{mcp:{expose:true}}` do not count, mcp.md §3), then the exact tier match.
 */
export function denial(row: FunctionRow, policy: ExposurePolicy): Denial | undefined {
  if (inHardFloor(row.function_id) || markedInternal(row.metadata)) return 'floor';
  const metadata = row.metadata ?? {};
  if (!policy.exposeAll && metadata['mcp.expose'] !== true) return 'not-exposed';
  if (policy.tier !== undefined && metadata['mcp.tier'] !== policy.tier) return 'not-exposed';
  return undefined;
}

export function isExposed(row: FunctionRow, policy: ExposurePolicy): boolean {
  return denial(row, policy) === undefined;
}

// seed §7 error texts (mcp.md §6 steps 6-8, with our names)
/** Why a floored function is refused: its namespace (the engine's or the chat control plane's), or its `internal` mark. */
export function floorText(id: string, metadata?: Record<string, unknown> | null): string {
  const plane = controlPlanePrefix(id);
  if (plane) {
    return `Function '${id}' belongs to the chat stack's control plane (${plane}*) and is never exposed via MCP, whatever the flags`;
  }
  if (ENGINE_WRAPPERS.has(id)) {
    return `Function '${id}' is an engine function that calls other functions and is never exposed via MCP, whatever the flags`;
  }
  if (!inHardFloor(id) && markedInternal(metadata)) {
    return `Function '${id}' is marked internal (metadata "internal": true) and is never exposed via MCP, whatever the flags`;
  }
  return `Function '${id}' is in the eng engine internal namespace and is not exposed as an MCP tool`;
}
export const notExposedText = (id: string) =>
  `Function '${id}' is not exposed via mcp.expose metadata (or does not match the active --tier filter)`;
export const unverifiedText = (id: string, why: string) =>
  `Function '${id}' exposure could not be verified (engine error: ${redactText(why)}); denying call`;
