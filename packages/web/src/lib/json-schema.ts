/**
 * A starting payload for the Invoke editor from a function's request schema: required and optional
 * properties filled with a typed placeholder (`""`, `0`, `false`, `[]`, `{}`), nested objects
 * expanded, `default`/`examples`/`enum`/`const` preferred when present (console spec §4 Functions).
 */
type Schema = Record<string, unknown>;

export function exampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 6) return {};
  const s = schema as Schema;
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const variants = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
  if (Array.isArray(variants) && variants.length) {
    const first = variants.find((v) => (v as Schema)?.type !== 'null') ?? variants[0];
    return exampleFromSchema(first, depth + 1);
  }
  if (Array.isArray(s.allOf) && s.allOf.length) {
    return Object.assign({}, ...s.allOf.map((part) => exampleFromSchema(part, depth + 1) as object));
  }
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') as string | undefined) : (s.type as string | undefined);
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(props)) out[key] = exampleFromSchema(value, depth + 1);
      return out;
    }
    case 'array':
      return [];
    case 'string':
      return s.format === 'date-time' ? new Date().toISOString() : '';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

export interface SchemaField {
  name: string;
  type: string;
  required: boolean;
  description?: string;
  depth: number;
}

/** Flatten an object schema into rows for the schema table of the detail pane. */
export function schemaFields(schema: unknown, depth = 0, prefix = ''): SchemaField[] {
  if (!schema || typeof schema !== 'object' || depth > 4) return [];
  const s = schema as Schema;
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const rows: SchemaField[] = [];
  for (const [name, prop] of Object.entries(props)) {
    const type = describeType(prop);
    rows.push({ name: prefix + name, type, required: required.has(name), description: prop?.description as string | undefined, depth });
    if (prop && (prop.type === 'object' || prop.properties)) rows.push(...schemaFields(prop, depth + 1, `${prefix}${name}.`));
    if (prop && prop.type === 'array' && prop.items && (prop.items as Schema).properties) {
      rows.push(...schemaFields(prop.items, depth + 1, `${prefix}${name}[].`));
    }
  }
  return rows;
}

function describeType(prop: Schema | undefined): string {
  if (!prop) return 'any';
  if (Array.isArray(prop.enum)) return prop.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(prop.type)) return prop.type.join(' | ');
  if (prop.type === 'array') return `${describeType(prop.items as Schema)}[]`;
  if (typeof prop.type === 'string') return prop.format ? `${prop.type} (${prop.format})` : prop.type;
  if (prop.oneOf || prop.anyOf) return ((prop.oneOf ?? prop.anyOf) as Schema[]).map(describeType).join(' | ');
  return 'any';
}
