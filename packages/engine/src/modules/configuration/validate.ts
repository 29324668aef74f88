import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as formatsModule from 'ajv-formats';

// JSON Schema validation of configuration values (ajv 8, draft-07 and 2019-09 keywords). Schema
// `default`s fill missing properties of a value that validates (useDefaults). Error messages never
// quote the value itself: only field paths and what the schema wants.

type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, logger: false, validateSchema: true });
  addFormats(ajv);
  ajv.addFormat('password', true); // a secret marker (see secrets.ts), any string is a valid password
  return ajv;
}

const ajv = makeAjv();

export class SchemaProblem extends Error {}

/** Compile a registered schema; a schema ajv cannot compile is a SchemaProblem naming the reason. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  try {
    // each entry gets its own compilation: a shared `$id` of two entries must not collide
    const { $id: _id, ...rest } = schema;
    return ajv.compile(rest);
  } catch (err) {
    throw new SchemaProblem(`schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
}

const MAX_REPORTED = 5;

/** `field.path: must be integer; other: is required` for the first few violations. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const lines = (errors ?? []).slice(0, MAX_REPORTED).map((e) => {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .join('.');
    const at = (field: string) => (path ? `${path}.${field}` : field);
    if (e.keyword === 'required') return `${at(String(e.params.missingProperty))}: is required`;
    if (e.keyword === 'additionalProperties') return `${at(String(e.params.additionalProperty))}: is not an allowed field`;
    if (e.keyword === 'enum')
      return `${path || '(value)'}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    return `${path || '(value)'}: ${e.message ?? e.keyword}`;
  });
  const more = (errors?.length ?? 0) - MAX_REPORTED;
  return more > 0 ? `${lines.join('; ')}; and ${more} more` : lines.join('; ');
}
