import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sameOrigin } from '../src/ws-proxy.ts';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('sameOrigin (the /ws upgrade check against DNS rebinding and cross-site pages)', () => {
  it('accepts the page served by this host, with or without the default port spelled out', () => {
    expect(sameOrigin(req({ host: '127.0.0.1:3113', origin: 'http://127.0.0.1:3113' }))).toBe(true);
    expect(sameOrigin(req({ host: 'console.local:80', origin: 'http://console.local' }))).toBe(true);
    expect(sameOrigin(req({ host: 'console.local', origin: 'https://console.local:443' }))).toBe(true);
    expect(sameOrigin(req({ host: '127.0.0.1:3113' }))).toBe(true); // no Origin: not a browser
  });

  it('refuses other hosts, other ports, and non-web origins', () => {
    expect(sameOrigin(req({ host: '127.0.0.1:3113', origin: 'http://evil.example' }))).toBe(false);
    expect(sameOrigin(req({ host: '127.0.0.1:3113', origin: 'http://127.0.0.1:3114' }))).toBe(false);
    expect(sameOrigin(req({ host: '127.0.0.1:3113', origin: 'file://' }))).toBe(false);
    expect(sameOrigin(req({ host: '127.0.0.1:3113', origin: 'null' }))).toBe(false);
    expect(sameOrigin(req({ origin: 'http://127.0.0.1:3113' }))).toBe(false);
  });
});
