/** How a JSON value is summarised in tables: its type, a one-line preview and its size. */

export type ValueKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export function valueKind(value: unknown): ValueKind {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

export function valuePreview(value: unknown, max = 140): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function valueBytes(value: unknown): number {
  try {
    return new TextEncoder().encode(JSON.stringify(value) ?? 'null').length;
  } catch {
    return 0;
  }
}

export const KIND_TONE: Record<ValueKind, 'info' | 'violet' | 'ok' | 'warn' | 'accent' | 'neutral'> = {
  object: 'info',
  array: 'violet',
  string: 'ok',
  number: 'warn',
  boolean: 'accent',
  null: 'neutral',
};
