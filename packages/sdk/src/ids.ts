/**
 * A v4 UUID (spec §2.2: invocation and trigger ids must be UUIDs). `crypto.randomUUID` exists in
 * Node 20 and in browsers, but browsers expose it only on secure origins; `getRandomValues` is
 * everywhere, so it is the fallback.
 */
export function randomId(): string {
  const cryptoApi = globalThis.crypto;
  if (typeof cryptoApi?.randomUUID === 'function') return cryptoApi.randomUUID();
  const bytes = new Uint8Array(16);
  cryptoApi.getRandomValues(bytes);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/**
 * `bytes` random bytes as lower-case hex (trace ids: 16, span ids: 8). Bytes come from a pool
 * refilled 4 KiB at a time: one `getRandomValues` per id was a visible cost on the call path.
 */
export function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    pool = new Uint8Array(POOL_SIZE);
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = 0; i < bytes; i++) out += HEX[pool[poolOffset + i] as number];
  poolOffset += bytes;
  return out;
}
