import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { ajvModules } from '../../stores/optional-deps.ts';

// JSON Schema validation of configuration values (ajv 8, draft-07 and 2019-09 keywords). Schema
// `default`s fill missing properties of a value that validates (useDefaults). Error messages never
// quote the value itself: only field paths and what the schema wants. ajv and its formats are
// loaded when the first schema is compiled: an engine whose configuration entries have no schema
// (most) never loads them (about 70 ms of CPU per engine start).

type FormatsPlugin = (ajv: Ajv) => Ajv;

let shared: Ajv | undefined;

function ajvInstance(): Ajv {
  if (shared) return shared;
  const { Ajv: AjvClass, formats } = ajvModules();
  const formatsModule = formats as { default?: FormatsPlugin } & FormatsPlugin;
  const addFormats = formatsModule.default ?? formatsModule;
  const ajv = new AjvClass({ allErrors: true, useDefaults: true, strict: false, logger: false, validateSchema: true });
  addFormats(ajv);
  ajv.addFormat('password', true); // a secret marker (see secrets.ts), any string is a valid password
  shared = ajv;
  return ajv;
}

export class SchemaProblem extends Error {}

/** Compile a registered schema; a schema ajv cannot compile is a SchemaProblem naming the reason. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  try {
    // each entry gets its own compilation: a shared `$id` of two entries must not collide
    const { $id: _id, ...rest } = schema;
    return ajvInstance().compile(rest);
  } catch (err) {
    throw new SchemaProblem(`schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
}

const MAX_REPORTED = 5;

/**
 * The subschema an error's `schemaPath` (`#/properties/a/minLength`) points into, read in the
 * compiled root: where a schema's own `errorMessage` is found.
 */
function schemaAt(root: unknown, schemaPath: string): Record<string, unknown> | undefined {
  if (!schemaPath.startsWith('#/')) return undefined;
  const parts = schemaPath
    .slice(2)
    .split('/')
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
  parts.pop(); // the keyword that failed
  let at: unknown = root;
  for (const part of parts) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined;
  return at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>) : undefined;
}

/**
 * `field.path: must be integer; other: is required` for the first few violations. A subschema may
 * word its own failures with `"errorMessage": "…"` (ajv-errors' keyword, string form): a field's
 * constraints then read as one sentence instead of ajv's (`must match pattern "\S"`).
 */
export function describeErrors(errors: ErrorObject[] | null | undefined, root?: unknown): string {
  const described = (errors ?? []).map((e) => {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .join('.');
    const at = (field: string) => (path ? `${path}.${field}` : field);
    if (e.keyword === 'required') return `${at(String(e.params.missingProperty))}: is required`;
    if (e.keyword === 'additionalProperties') return `${at(String(e.params.additionalProperty))}: is not an allowed field`;
    const own = root === undefined ? undefined : schemaAt(root, e.schemaPath)?.errorMessage;
    if (typeof own === 'string' && own) return `${path || '(value)'}: ${own}`;
    if (e.keyword === 'enum')
      return `${path || '(value)'}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    return `${path || '(value)'}: ${e.message ?? e.keyword}`;
  });
  // one field failing two constraints worded by the same errorMessage reads once
  const lines = [...new Set(described)];
  const more = lines.length - MAX_REPORTED;
  return more > 0 ? `${lines.slice(0, MAX_REPORTED).join('; ')}; and ${more} more` : lines.join('; ');
}
