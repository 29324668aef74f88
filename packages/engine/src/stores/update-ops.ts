import { z } from 'zod';

/**
 * `UpdateOp`s of `state::update` and `stream::update` (spec §4.4). A malformed op (unknown type,
 * missing `path`, fractional `by`) fails the whole call at decoding; an op that is well formed but
 * cannot apply (limits, prototype-pollution keys, type mismatches) is skipped and reported in
 * `errors`, and the other ops still apply.
 */

const MAX_PATH_DEPTH = 32;
const MAX_SEGMENT_BYTES = 256;
const MAX_VALUE_DEPTH = 16;
const MAX_VALUE_KEYS = 1024;
/** Keys that reach a JS prototype through `Object.assign` or naive spreading on the consumer side. */
const PROTO_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const MergePath = z.union([z.string(), z.array(z.string())]).nullish();
const FieldPath = z.string({ error: 'path must be a string ("" targets the whole value)' });
/** spec: `by` is an i64; JS numbers are exact up to 2^53, so that is the accepted range. */
const Step = z.number({ error: 'by must be an integer' }).int({ error: 'by must be an integer (i64)' });

export const UpdateOpSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('set'), path: FieldPath, value: z.unknown() }),
    z.object({ type: z.literal('merge'), path: MergePath, value: z.unknown() }),
    z.object({ type: z.literal('increment'), path: FieldPath, by: Step }),
    z.object({ type: z.literal('decrement'), path: FieldPath, by: Step }),
    z.object({ type: z.literal('append'), path: MergePath, value: z.unknown() }),
    z.object({ type: z.literal('remove'), path: FieldPath }),
  ],
  { error: 'type must be one of set, merge, increment, decrement, append, remove' },
);
export type UpdateOp = z.infer<typeof UpdateOpSchema>;
export const UpdateOpsSchema = z.array(UpdateOpSchema).max(1024, { error: 'at most 1024 ops per update' });

export interface UpdateOpError {
  op_index: number;
  code: string;
  message: string;
  doc_url?: string;
}

export interface AppliedUpdate {
  value: unknown;
  errors: UpdateOpError[];
  /** Number of ops that applied; 0 means the stored value is untouched. */
  applied: number;
}

type Json = unknown;
type JsonObject = Record<string, Json>;

type Problem = { code: string; message: string };
/** The value being updated; `missing` while the key is absent and no op has applied yet. */
interface Doc {
  value: Json;
  missing: boolean;
}

/**
 * Apply `ops` in order to `current` (undefined when the key is missing: start from `{}`). The
 * value is changed in place: pass a private copy (stores hand `update` functions a fresh decode).
 */
export function applyUpdateOps(current: unknown | undefined, ops: readonly UpdateOp[]): AppliedUpdate {
  const doc: Doc = { value: current === undefined ? {} : current, missing: current === undefined };
  const errors: UpdateOpError[] = [];
  let applied = 0;
  for (const [index, op] of ops.entries()) {
    const problem = applyOne(doc, op);
    if (problem) {
      errors.push({ op_index: index, ...problem });
      continue;
    }
    doc.missing = false;
    applied++;
  }
  return { value: doc.value, errors, applied };
}

/** Apply one op to `doc` in place, or say why it cannot apply (then `doc` is unchanged). */
function applyOne(doc: Doc, op: UpdateOp): Problem | undefined {
  const nested = op.type === 'merge' || op.type === 'append';
  const segments = nested ? mergeSegments(op.path) : fieldSegments(op.path);
  const pathProblem = checkPath(op.type, segments);
  if (pathProblem) return pathProblem;
  const label = segments.length === 0 ? 'root' : nested ? `[${segments.join(', ')}]` : (segments[0] as string);
  const notObject = (name: string) => ({
    code: `${name}.target_not_object`,
    message: `Cannot ${name} at path '${label}': target is ${typeName(doc.value)}, expected object.`,
  });

  switch (op.type) {
    case 'set': {
      const next = op.value === undefined ? null : op.value;
      if (segments.length === 0) doc.value = next;
      else if (isObject(doc.value)) doc.value[segments[0] as string] = next;
      else return notObject('set');
      return undefined;
    }
    case 'merge': {
      const problem = checkMergeValue(op.value);
      if (problem) return problem;
      if (!isObject(doc.value)) {
        if (segments.length === 0) return notObject('merge');
        doc.value = {}; // a nested merge replaces a non-object root, like any non-object intermediate
      }
      const target = walkOrCreate(doc.value as JsonObject, segments);
      for (const [k, v] of Object.entries(op.value as JsonObject)) target[k] = v;
      return undefined;
    }
    case 'increment':
    case 'decrement': {
      const by = op.type === 'increment' ? op.by : -op.by;
      if (segments.length === 0) {
        if (doc.missing) doc.value = by;
        else {
          const sum = addNumber(doc.value, by);
          if (typeof sum === 'string') return { code: `${op.type}.${sum}`, message: numberMessage(sum, label, doc.value) };
          doc.value = sum;
        }
        return undefined;
      }
      if (!isObject(doc.value)) return notObject(op.type);
      const field = segments[0] as string;
      if (!Object.hasOwn(doc.value, field)) {
        doc.value[field] = by; // a missing field starts from 0
        return undefined;
      }
      const sum = addNumber(doc.value[field], by);
      if (typeof sum === 'string') return { code: `${op.type}.${sum}`, message: numberMessage(sum, label, doc.value[field]) };
      doc.value[field] = sum;
      return undefined;
    }
    case 'append': {
      const item = op.value === undefined ? null : op.value;
      if (segments.length === 0) {
        const result = appendTo(doc.missing ? null : doc.value, item, label);
        if ('error' in result) return { code: 'append.type_mismatch', message: result.error };
        doc.value = result.value;
        return undefined;
      }
      if (!isObject(doc.value)) return notObject('append');
      const parent = walkOrCreate(doc.value, segments.slice(0, -1));
      const leaf = segments[segments.length - 1] as string;
      if (!Object.hasOwn(parent, leaf)) {
        // a missing leaf of a nested path is always an array; a first-level field keeps the string tier
        parent[leaf] = segments.length === 1 && typeof item === 'string' ? item : [item];
        return undefined;
      }
      const result = appendTo(parent[leaf], item, label);
      if ('error' in result) return { code: 'append.type_mismatch', message: result.error };
      parent[leaf] = result.value;
      return undefined;
    }
    case 'remove': {
      if (segments.length === 0) doc.value = null;
      else if (isObject(doc.value)) delete doc.value[segments[0] as string];
      else return notObject('remove');
      return undefined;
    }
  }
}

function fieldSegments(path: string): string[] {
  return path === '' ? [] : [path];
}

function mergeSegments(path: string | string[] | null | undefined): string[] {
  if (path === undefined || path === null || path === '') return [];
  return typeof path === 'string' ? [path] : path;
}

function checkPath(op: string, segments: string[]): Problem | undefined {
  if (segments.length > MAX_PATH_DEPTH) {
    return { code: `${op}.path.too_deep`, message: `Path depth ${segments.length} exceeds maximum of ${MAX_PATH_DEPTH}` };
  }
  for (const segment of segments) {
    if (segment === '') return { code: `${op}.path.empty_segment`, message: 'Path contains an empty segment' };
    const bytes = Buffer.byteLength(segment);
    if (bytes > MAX_SEGMENT_BYTES) {
      return { code: `${op}.path.segment_too_long`, message: `Path segment of ${bytes} bytes exceeds maximum of ${MAX_SEGMENT_BYTES}` };
    }
    if (PROTO_KEYS.has(segment)) {
      return { code: `${op}.path.proto_polluted`, message: `Path segment '${segment}' is not allowed (prototype pollution).` };
    }
  }
  return undefined;
}

function checkMergeValue(value: unknown): Problem | undefined {
  if (!isObject(value)) return { code: 'merge.value.not_an_object', message: `Merge value must be a JSON object, got ${typeName(value)}` };
  const keys = Object.keys(value);
  if (keys.length > MAX_VALUE_KEYS) {
    return {
      code: 'merge.value.too_many_keys',
      message: `Merge value has ${keys.length} top-level keys, exceeds maximum of ${MAX_VALUE_KEYS}`,
    };
  }
  const polluted = keys.find((k) => PROTO_KEYS.has(k));
  if (polluted)
    return { code: 'merge.value.proto_polluted', message: `Merge value top-level key "${polluted}" is a prototype-pollution sink` };
  const depth = jsonDepth(value);
  if (depth > MAX_VALUE_DEPTH) {
    return { code: 'merge.value.too_deep', message: `Merge value JSON nesting depth ${depth} exceeds maximum of ${MAX_VALUE_DEPTH}` };
  }
  return undefined;
}

function jsonDepth(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((max: number, v) => Math.max(max, jsonDepth(v)), 0);
  if (isObject(value)) return 1 + Object.values(value).reduce((max: number, v) => Math.max(max, jsonDepth(v)), 0);
  return 0;
}

/** Descend `segments`, replacing missing or non-object intermediates with `{}`. */
function walkOrCreate(root: JsonObject, segments: string[]): JsonObject {
  let node = root;
  for (const segment of segments) {
    const child = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (!isObject(child)) {
      const fresh: JsonObject = {};
      node[segment] = fresh;
      node = fresh;
    } else {
      node = child;
    }
  }
  return node;
}

function appendTo(target: unknown, item: unknown, label: string): { value: unknown } | { error: string } {
  if (target === null || target === undefined) return { value: typeof item === 'string' ? item : [item] };
  if (Array.isArray(target)) return { value: [...target, item] };
  if (typeof target === 'string') {
    if (typeof item === 'string') return { value: target + item };
    return { error: `Expected string append value at path '${label}', got ${typeName(item)}.` };
  }
  return { error: `Cannot append at path '${label}': target is ${typeName(target)}, expected array, string, null, or missing field.` };
}

/** The sum, or an error reason: `not_number`, or `overflow` when integers leave the exact range. */
function addNumber(current: unknown, by: number): number | 'not_number' | 'overflow' {
  if (typeof current !== 'number') return 'not_number';
  const sum = current + by;
  if (Number.isSafeInteger(current) && !Number.isSafeInteger(sum)) return 'overflow';
  return sum;
}

function numberMessage(reason: 'not_number' | 'overflow', label: string, current: unknown): string {
  return reason === 'overflow'
    ? `Result at path '${label}' leaves the exact integer range (±2^53).`
    : `Expected number at path '${label}', got ${typeName(current)}.`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
