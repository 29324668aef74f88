/**
 * Secret fields of a configuration value: a property whose schema says `"writeOnly": true` or
 * `"format": "password"`, at any depth (nested objects, maps through `additionalProperties` or
 * `patternProperties`, array items, local `$ref`s, and `allOf`/`anyOf`/`oneOf` branches: a
 * property any branch marks secret is secret).
 *
 * Reads show a stored secret as the marker `{"set": true}` in its place and nothing when unset.
 * A write that omits a secret, or sends the marker back, keeps the stored one (so a form can save
 * the other fields without resending the key); `{"set": false}` removes it.
 *
 * A secret field whose schema also says `"x-eng-env": true` (or names variables:
 * `"x-eng-env": ["OPENAI_API_KEY"]`) may hold `${VAR}` placeholders, expanded only for
 * `configuration::reveal` (expand.ts).
 */

import { expandEnv } from './expand.ts';

type Schema = Record<string, unknown>;
type Json = unknown;

const MAX_REF_HOPS = 32;

export const SECRET_MARKER = Object.freeze({ set: true });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{"set": true}` / `{"set": false}` as sent back by a form. */
function markerOf(value: unknown): boolean | undefined {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === 'set' && typeof value.set === 'boolean' ? value.set : undefined;
}

/** Follow a local `$ref` (`#/definitions/x`, `#/$defs/x`) to its target. */
function resolve(root: Schema, schema: unknown): Schema | undefined {
  let current = schema;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops >= MAX_REF_HOPS || !current.$ref.startsWith('#')) return undefined;
    let target: unknown = root;
    for (const raw of current.$ref.slice(1).split('/').filter(Boolean)) {
      const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[part] : undefined;
    }
    current = target;
  }
  return isObject(current) ? current : undefined;
}

/** The schema and every schema its combinators bring in, `$ref`s followed. */
function branches(root: Schema, schema: unknown, out: Schema[] = [], depth = 0): Schema[] {
  const s = resolve(root, schema);
  if (!s || depth > 16) return out;
  out.push(s);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[key];
    if (Array.isArray(list)) for (const sub of list) branches(root, sub, out, depth + 1);
  }
  for (const key of ['then', 'else'] as const) if (s[key] !== undefined) branches(root, s[key], out, depth + 1);
  return out;
}

function isSecretSchema(s: Schema): boolean {
  return s.writeOnly === true || s.format === 'password';
}

/** Schemas that apply to property `key` of an object validated by `schemas`. */
function propertySchemas(root: Schema, schemas: Schema[], key: string): Schema[] {
  const out: Schema[] = [];
  for (const s of schemas) {
    const properties = isObject(s.properties) ? s.properties : {};
    let matched = false;
    if (key in properties) {
      branches(root, properties[key], out);
      matched = true;
    }
    if (isObject(s.patternProperties)) {
      for (const [pattern, sub] of Object.entries(s.patternProperties)) {
        try {
          if (new RegExp(pattern, 'u').test(key)) {
            branches(root, sub, out);
            matched = true;
          }
        } catch {
          // an invalid pattern cannot match
        }
      }
    }
    if (!matched && isObject(s.additionalProperties)) branches(root, s.additionalProperties, out);
  }
  return out;
}

/** Schemas that apply to item `index` of an array validated by `schemas`. */
function itemSchemas(root: Schema, schemas: Schema[], index: number): Schema[] {
  const out: Schema[] = [];
  for (const s of schemas) {
    if (Array.isArray(s.prefixItems) && index < s.prefixItems.length) branches(root, s.prefixItems[index], out);
    else if (Array.isArray(s.items)) {
      if (index < s.items.length) branches(root, s.items[index], out);
      else if (isObject(s.additionalItems)) branches(root, s.additionalItems, out);
    } else if (isObject(s.items)) branches(root, s.items, out);
  }
  return out;
}

/** True when the schema marks at least one field secret (so redaction is worth walking). */
export function hasSecrets(schema: Schema): boolean {
  return JSON.stringify(schema).match(/"writeOnly"\s*:\s*true|"format"\s*:\s*"password"/) !== null;
}

/** A copy of `value` with each secret field's value replaced by `atSecret(value, its schemas)`. */
function mapSecrets(schema: Schema, value: Json, atSecret: (child: Json, schemas: Schema[]) => Json): Json {
  const walk = (v: Json, schemas: Schema[]): Json => {
    if (Array.isArray(v)) return v.map((item, i) => walk(item, itemSchemas(schema, schemas, i)));
    if (!isObject(v)) return v;
    const out: Record<string, Json> = {};
    for (const [key, child] of Object.entries(v)) {
      const subs = propertySchemas(schema, schemas, key);
      out[key] = subs.some(isSecretSchema) ? atSecret(child, subs) : walk(child, subs);
    }
    return out;
  };
  return walk(value, branches(schema, schema));
}

/** A copy of `value` with every stored secret replaced by `{"set": true}`. */
export function redact(schema: Schema, value: Json): Json {
  if (!hasSecrets(schema)) return value;
  return mapSecrets(schema, value, () => ({ ...SECRET_MARKER }));
}

export const ENV_KEYWORD = 'x-eng-env';

/** The variables a secret field may read: `true` (any), their names, or undefined (none declared). */
function envAllowance(schemas: Schema[]): ReadonlySet<string> | true | undefined {
  const names = new Set<string>();
  for (const s of schemas) {
    const declared = s[ENV_KEYWORD];
    if (declared === true) return true;
    for (const name of typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared : [])
      if (typeof name === 'string') names.add(name);
  }
  return names.size ? names : undefined;
}

/**
 * A copy of `value` with `${VAR}` expanded in the secret fields that declare `"x-eng-env"`; a
 * field `get` can read never expands, declared or not (issue 24 item 10).
 */
export function expandSecrets(schema: Schema, value: Json, env: NodeJS.ProcessEnv = process.env): Json {
  if (!hasSecrets(schema) || !JSON.stringify(schema).includes(`"${ENV_KEYWORD}"`)) return value;
  return mapSecrets(schema, value, (child, subs) => {
    const allowed = envAllowance(subs);
    return allowed === undefined ? child : expandEnv(child, allowed, env);
  });
}

/** Every string held in a secret field of `value`: what telemetry must never keep. */
export function secretStrings(schema: Schema, value: Json): string[] {
  if (!hasSecrets(schema)) return [];
  const out: string[] = [];
  const collect = (v: Json): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const item of v) collect(item);
    else if (isObject(v)) for (const item of Object.values(v)) collect(item);
  };
  mapSecrets(schema, value, (child) => {
    collect(child);
    return child;
  });
  return out;
}

/**
 * The value to store for a write of `next` over `stored`: secrets the write omits or sends as
 * `{"set": true}` keep their stored value; `{"set": false}` drops them. A secret is kept only
 * where its parent object is still present in the write.
 */
export function mergeSecrets(schema: Schema, next: Json, stored: Json): Json {
  if (!hasSecrets(schema)) return next;
  const walk = (n: Json, o: Json, schemas: Schema[]): Json => {
    if (Array.isArray(n)) return n.map((item, i) => walk(item, Array.isArray(o) ? o[i] : undefined, itemSchemas(schema, schemas, i)));
    if (!isObject(n)) return n;
    const old = isObject(o) ? o : {};
    const out: Record<string, Json> = {};
    for (const [key, child] of Object.entries(n)) {
      const subs = propertySchemas(schema, schemas, key);
      if (subs.some(isSecretSchema)) {
        const marker = markerOf(child);
        if (marker === undefined) out[key] = child;
        else if (marker && key in old) out[key] = old[key];
        continue;
      }
      out[key] = walk(child, old[key], subs);
    }
    for (const [key, child] of Object.entries(old)) {
      if (!(key in n) && propertySchemas(schema, schemas, key).some(isSecretSchema)) out[key] = child;
    }
    return out;
  };
  return walk(next, stored, branches(schema, schema));
}
