/**
 * The depth scan that guards every entry point (core/json-limits.ts) against the real nesting of
 * the values it is asked about: random documents with brackets, quotes and backslashes inside
 * strings (short ones and ones long enough for the native skip), at depths around the limit.
 */
import { describe, expect, it } from 'vitest';
import { idTooLong, jsonTooDeep, MAX_ID_BYTES, MAX_JSON_DEPTH, topLevelStrings } from '../src/core/json-limits.ts';

function depthOf(value: unknown): number {
  // iterative: the values here stay shallow enough, but the check must not depend on that
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    max = Math.max(max, d);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

let seed = 12345;
const random = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const TRICKY = ['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', 'é', '💥', '\n', 'x'];
function trickyString(): string {
  const long = random() < 0.2;
  const n = long ? 60 + Math.floor(random() * 200) : Math.floor(random() * 12);
  let s = '';
  for (let i = 0; i < n; i++) s += TRICKY[Math.floor(random() * TRICKY.length)];
  return s;
}
function randomDoc(targetDepth: number): unknown {
  if (targetDepth <= 0) return random() < 0.5 ? trickyString() : Math.floor(random() * 100);
  const inner = randomDoc(targetDepth - 1);
  const sibling = random() < 0.5 ? trickyString() : [trickyString(), { [trickyString()]: trickyString() }];
  return random() < 0.5 ? [sibling, inner, trickyString()] : { [trickyString()]: sibling, [`k${trickyString()}`]: inner };
}

describe('jsonTooDeep', () => {
  it('agrees with the parsed value on 600 random documents around the limit', () => {
    const verdicts = { over: 0, within: 0 };
    for (let i = 0; i < 600; i++) {
      const doc = randomDoc(MAX_JSON_DEPTH - 6 + Math.floor(random() * 12));
      const text = JSON.stringify(doc);
      const depth = depthOf(JSON.parse(text));
      expect(jsonTooDeep(Buffer.from(text)), `depth ${depth}: ${text.slice(0, 200)}`).toBe(depth > MAX_JSON_DEPTH);
      verdicts[depth > MAX_JSON_DEPTH ? 'over' : 'within']++;
    }
    expect(verdicts.over).toBeGreaterThan(100);
    expect(verdicts.within).toBeGreaterThan(100);
  });

  it('counts brackets only outside strings, whatever the escapes', () => {
    const inString = JSON.stringify({ s: `${'['.repeat(500)}\\"${'{'.repeat(500)}`, t: '\\', u: '"['.repeat(300) });
    expect(jsonTooDeep(Buffer.from(inString))).toBe(false);
    const deep = `{"a":"\\\\","b":${'['.repeat(129)}${']'.repeat(129)}}`;
    expect(jsonTooDeep(Buffer.from(deep))).toBe(true);
    expect(jsonTooDeep(Buffer.from(`${'['.repeat(128)}${']'.repeat(128)}`))).toBe(false);
    expect(jsonTooDeep(Buffer.from(`${'['.repeat(129)}${']'.repeat(129)}`))).toBe(true);
    // a long string (native skip) whose escaped quote sits past the inline part
    const long = `{"s":"${'x'.repeat(100)}\\"${'['.repeat(300)}","d":${'{"a":'.repeat(10)}1${'}'.repeat(10)}}`;
    expect(jsonTooDeep(Buffer.from(long))).toBe(false);
  });

  it('reads the strings of top-level keys without parsing the rest', () => {
    const frame = Buffer.from(
      `{"type":"invokefunction","data":{"id":"nested"},"invocation_id":"abc","x":${'['.repeat(5000)}"id"${']'.repeat(5000)},"function_id":"a\\"b"}`,
    );
    expect(topLevelStrings(frame, ['type', 'invocation_id', 'function_id', 'id'])).toEqual({
      type: 'invokefunction',
      invocation_id: 'abc',
      function_id: 'a"b',
    });
  });
});

describe('idTooLong', () => {
  it('counts UTF-8 bytes', () => {
    expect(idTooLong('the id', 'a'.repeat(MAX_ID_BYTES))).toBeUndefined();
    expect(idTooLong('the id', 'é'.repeat(128))).toBeUndefined();
    expect(idTooLong('the id', 'é'.repeat(129))?.message).toMatch(/^the id is 258 bytes long; the engine accepts ids of at most 256 bytes/);
  });
});
