import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as formatsModule from 'ajv-formats';

// JSON Schema validation in the dialect a schema declares (`$schema`): 2020-12 (`prefixItems`,
// `unevaluatedProperties`, `$defs`, `dependentRequired`…), 2019-09, or draft-07 (also for draft-06
// and draft-04, which ajv 8 reads as draft-07). MCP 2025-11-25 makes 2020-12 the default for a
// schema that declares nothing; one that only compiles under draft-07 (an array `items` tuple) is
// read as draft-07. Compiled validators are cached by schema text. A schema no dialect can compile
// validates nothing (the engine accepted it; refusing every call would only lock the tool out).

type Dialect = '2020-12' | '2019-09' | 'draft-07';
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

const OPTIONS = { strict: false, allErrors: true, validateSchema: false, logger: false } as const;
const instances = new Map<Dialect, Ajv>();

function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    ajv = dialect === '2020-12' ? new Ajv2020(OPTIONS) : dialect === '2019-09' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS);
    addFormats(ajv);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** The dialect a `$schema` URI names; undefined for none (or one we do not know). */
export function declaredDialect(schema: Record<string, unknown>): Dialect | undefined {
  const uri = schema.$schema;
  if (typeof uri !== 'string') return undefined;
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  if (/draft-0[4-7]/.test(uri)) return 'draft-07';
  return undefined;
}

type Check = (value: unknown, label: string) => string | undefined;
const compiled = new Map<string, Check>();
const MAX_COMPILED = 500;

function compile(schema: Record<string, unknown>): Check {
  // `$schema` picks the instance; left in, ajv would look the meta-schema up (and `$id` would collide across tools)
  const { $schema: _dialect, $id: _id, ...body } = schema;
  const declared = declaredDialect(schema);
  const order: Dialect[] = declared ? [declared] : ['2020-12', 'draft-07'];
  for (const dialect of order) {
    let validate: ValidateFunction;
    try {
      validate = ajvFor(dialect).compile(body);
    } catch {
      continue;
    }
    const ajv = ajvFor(dialect);
    return (value, label) => (validate(value) ? undefined : ajv.errorsText(validate.errors, { dataVar: label }));
  }
  return () => undefined;
}

/**
 * The same schema object (a mirrored row's, never changed in place: a new listing brings new
 * objects) finds its check without being serialised again for the text-keyed cache, once per call.
 */
const byObject = new WeakMap<object, Check>();

/** Why `value` does not match `schema` (paths start with `label`), or undefined when it does. */
export function validateAgainst(schema: Record<string, unknown>, value: unknown, label = 'data'): string | undefined {
  let check = byObject.get(schema);
  if (!check) {
    const key = JSON.stringify(schema);
    check = compiled.get(key);
    if (!check) {
      check = compile(schema);
      if (compiled.size >= MAX_COMPILED) compiled.clear();
      compiled.set(key, check);
    }
    byObject.set(schema, check);
  }
  return check(value, label);
}
