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
// void/enqueue built-ins and trigger registration alike (mcp.md §19: the reference let the
// built-ins bypass it).

export type GateOutcome =
  | { ok: true; row: FunctionRow }
  | { ok: false; reason: 'floor' | 'unknown' | 'not-exposed' | 'unverified'; functionId: string; text: string };

/** A built-in's `function_id` argument may be the id (`ns::name`) or the tool name (`ns__name`). */
export function functionIdFromArgument(value: string): string {
  return value.includes('::') ? value : functionIdOf(value);
}

/**
 * Floor first (no engine round trip), then a fresh look at the engine (never a cached list, so a
 * function that lost its exposure since the last tools/list is refused), failing closed.
 * `fallbackId` is tried when `functionId` does not exist (a function id that itself contains `__`).
 */
export async function checkGate(view: EngineView, policy: ExposurePolicy, functionId: string, fallbackId?: string): Promise<GateOutcome> {
  if (inHardFloor(functionId)) return { ok: false, reason: 'floor', functionId, text: floorText(functionId) };
  if (!(await view.waitConnected())) {
    return { ok: false, reason: 'unverified', functionId, text: unverifiedText(functionId, 'the eng engine is not connected') };
  }
  let row: FunctionRow | null;
  let id = functionId;
  try {
    row = await view.functionInfo(functionId);
    if (!row && fallbackId && fallbackId !== functionId && !inHardFloor(fallbackId)) {
      row = await view.functionInfo(fallbackId);
      if (row) id = fallbackId;
    }
  } catch (err) {
    return { ok: false, reason: 'unverified', functionId, text: unverifiedText(functionId, (err as Error).message ?? String(err)) };
  }
  if (!row) return { ok: false, reason: 'unknown', functionId, text: notExposedText(functionId) };
  const denied = denial(row, policy);
  if (denied === 'floor') return { ok: false, reason: 'floor', functionId: id, text: floorText(id) };
  if (denied) return { ok: false, reason: 'not-exposed', functionId: id, text: notExposedText(id) };
  return { ok: true, row };
}
