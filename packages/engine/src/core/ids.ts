import { randomFillSync } from 'node:crypto';

// The random ids the engine makes per call, all from pooled CSPRNG buffers (one crypto call per
// batch, not per id): invocation ids, channel ids and channel access keys.
//
// Random (version 4) UUIDs for invocation and channel ids.
// `crypto.randomUUID()` pools its random bytes, but builds each string from 20 one- and two-character
// pieces: about 1.7 KB of short-lived strings per HTTP request (three ids), the largest single
// allocation on that path. Here a batch of ids is written as text into one buffer, from one CSPRNG
// call, and each id is one string cut from it.

const BATCH = 128;
const UUID_CHARS = 36;
const random = Buffer.alloc(16 * BATCH);
const text = Buffer.alloc(UUID_CHARS * BATCH);
const HEX = Buffer.from('0123456789abcdef', 'latin1');
let next = BATCH;

function refill(): void {
  randomFillSync(random);
  let out = 0;
  for (let id = 0; id < BATCH; id++) {
    const base = id * 16;
    // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 10 in the high bits of byte 8
    random[base + 6] = ((random[base + 6] as number) & 0x0f) | 0x40;
    random[base + 8] = ((random[base + 8] as number) & 0x3f) | 0x80;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[out++] = 0x2d; // '-'
      const byte = random[base + i] as number;
      text[out++] = HEX[byte >> 4] as number;
      text[out++] = HEX[byte & 0x0f] as number;
    }
  }
  next = 0;
}

/** A random version 4 UUID in lower-case text (what `crypto.randomUUID()` returns). */
export function newUuid(): string {
  if (next === BATCH) refill();
  const start = next * UUID_CHARS;
  next++;
  return text.toString('latin1', start, start + UUID_CHARS);
}

// Channel access keys: 24 random bytes in base64url, cut from a pool (one randomBytes call per key
// was ~9% of the HTTP module's CPU when it makes two channels per request).
const KEY_BYTES = 24;
const keyPool = Buffer.alloc(KEY_BYTES * 128);
let keyOffset = keyPool.length;

/** A channel's access key: 24 random bytes as 32 base64url characters. */
export function newAccessKey(): string {
  if (keyOffset === keyPool.length) {
    randomFillSync(keyPool);
    keyOffset = 0;
  }
  const key = keyPool.toString('base64url', keyOffset, keyOffset + KEY_BYTES);
  keyOffset += KEY_BYTES;
  return key;
}
