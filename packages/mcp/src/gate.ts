import type { EngineView } from './engine-view.ts';
import {
  denial,
  type ExposurePolicy,
  type FunctionRow,
  floorText,
  functionIdOf,
  inHardFloor,
  notExposedText,
  unverifiedText,
} from './exposure.ts';

// spec: seed §4.3 rule 4 (b)-(c) — the check every call path goes through: function tools, the
// void/enqueue built-ins, trigger registration, resources and prompts alike (mcp.md §19: the
// reference let the built-ins bypass it).

export type GateOutcome =
  | { ok: true; row: FunctionRow }
  | { ok: false; reason: 'floor' | 'unknown' | 'not-exposed' | 'unverified'; functionId: string; text: string };

/**
 * A built-in's `function_id` argument may be the id (`ns::name`) or the tool name (`ns__name`, or a
 * listed name with a hash suffix).
 */
export function functionIdFromArgument(value: string, view?: EngineView): string {
  if (value.includes('::')) return value;
  return view?.idForTool(value) ?? functionIdOf(value);
}

/**
 * Floor first (no engine round trip), then a fresh look at the engine (never a cached list, so a
 * function that lost its exposure since the last tools/list is refused), failing closed. The floor
 * is checked on the real id, the one the engine calls, and then on the row (`"internal": true`).
 */
export async function checkGate(view: EngineView, policy: ExposurePolicy, functionId: string): Promise<GateOutcome> {
  if (inHardFloor(functionId)) return { ok: false, reason: 'floor', functionId, text: floorText(functionId) };
  if (!(await view.waitConnected())) {
    return { ok: false, reason: 'unverified', functionId, text: unverifiedText(functionId, 'the eng engine is not connected') };
  }
  let row: FunctionRow | null;
  try {
    row = await view.functionInfo(functionId);
  } catch (err) {
    return { ok: false, reason: 'unverified', functionId, text: unverifiedText(functionId, (err as Error).message ?? String(err)) };
  }
  if (!row) return { ok: false, reason: 'unknown', functionId, text: notExposedText(functionId) };
  const denied = denial(row, policy);
  if (denied === 'floor') return { ok: false, reason: 'floor', functionId, text: floorText(functionId, row.metadata) };
  if (denied) return { ok: false, reason: 'not-exposed', functionId, text: notExposedText(functionId) };
  return { ok: true, row };
}
