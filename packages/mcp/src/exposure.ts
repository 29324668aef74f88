import { redactText } from '@eng/protocol';

// spec: seed §2.11 and §4.3 rules 1, 2 and 5 — which engine functions become MCP tools, and
// under which names.

/**
 * Prefixes never exposed, whatever the metadata or flags say (seed §4.3 rule 5). The `iii` ones
 * too (mcp.md §2): the engine registers iii aliases of its `eng::` functions (`iii::queue::redrive`),
 * and iii workers' SDK internals use `iii.`. The single definition every path goes through.
 */
export const HARD_FLOOR = ['engine::', 'state::', 'stream::', 'eng.', 'eng::', 'iii.', 'iii::', 'mcp::', 'a2a::'] as const;

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

/** Tool name for a function id: every `::` becomes `__` (seed §4.3 rule 1). */
export function toolName(functionId: string): string {
  return functionId.replaceAll('::', '__');
}

/** Function id for a tool name: every `__` becomes `::` (seed §4.3 rule 4a). */
export function functionIdOf(name: string): string {
  return name.replaceAll('__', '::');
}

/**
 * In the floor: the id, or what its tool name reverses to (a function registered as `iii__x` is
 * listed as `iii__x`, and a call of `iii__x` means `iii::x` first), so listing and calling agree.
 */
export function inHardFloor(functionId: string): boolean {
  const reversed = functionIdOf(functionId);
  return HARD_FLOOR.some((prefix) => functionId.startsWith(prefix) || reversed.startsWith(prefix));
}

/**
 * The gate, in the seed's order: floor, then the flat boolean key `"mcp.expose"` (a string "true"
 * or the nested `{mcp:{expose:true}}` do not count, mcp.md §3), then the exact tier match.
 */
export function denial(row: FunctionRow, policy: ExposurePolicy): Denial | undefined {
  if (inHardFloor(row.function_id)) return 'floor';
  const metadata = row.metadata ?? {};
  if (!policy.exposeAll && metadata['mcp.expose'] !== true) return 'not-exposed';
  if (policy.tier !== undefined && metadata['mcp.tier'] !== policy.tier) return 'not-exposed';
  return undefined;
}

export function isExposed(row: FunctionRow, policy: ExposurePolicy): boolean {
  return denial(row, policy) === undefined;
}

// seed §7 error texts (mcp.md §6 steps 6-8, with our names)
export const floorText = (id: string) => `Function '${id}' is in the eng engine internal namespace and is not exposed as an MCP tool`;
export const notExposedText = (id: string) =>
  `Function '${id}' is not exposed via mcp.expose metadata (or does not match the active --tier filter)`;
export const unverifiedText = (id: string, why: string) =>
  `Function '${id}' exposure could not be verified (engine error: ${redactText(why)}); denying call`;
