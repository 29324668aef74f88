import { describe, expect, it } from 'vitest';
import { newAccessKey, newUuid } from '../src/core/ids.ts';

// invocation and channel ids: workers (iii-sdk included) and the engine's own result check expect
// RFC 9562 version 4 UUIDs in lower case, and an id must never repeat while its call is pending

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newUuid', () => {
  it('makes version 4 UUIDs across many batches, none repeated', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50_000; i++) {
      const id = newUuid();
      expect(V4.test(id), id).toBe(true);
      seen.add(id);
    }
    expect(seen.size).toBe(50_000);
  });

  it('spreads its random bits over every hex digit position', () => {
    // a fixed or stuck position (a refill bug writing the same bytes) shows up as one digit only
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 2_000; i++) {
      const id = newUuid();
      for (let p = 0; p < 36; p++) digits[p]?.add(id[p] as string);
    }
    for (let p = 0; p < 36; p++) {
      if ([8, 13, 18, 23].includes(p)) expect([...(digits[p] as Set<string>)]).toEqual(['-']);
      else if (p === 14) expect([...(digits[p] as Set<string>)]).toEqual(['4']);
      else if (p === 19) expect(digits[p]?.size).toBe(4);
      else expect(digits[p]?.size).toBe(16);
    }
  });

  it('makes channel access keys of 24 random bytes, none repeated across pool refills', () => {
    // a key is all that stands between a channel and any process on the machine that learns its id
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const key = newAccessKey();
      expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(Buffer.from(key, 'base64url').length).toBe(24);
      seen.add(key);
    }
    expect(seen.size).toBe(1_000);
  });
});
