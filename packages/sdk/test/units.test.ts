import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SDK_VERSION, TriggerAction, type WebSocketConstructor } from '@eng/sdk';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { backoffDelay, DEFAULT_RECONNECT, mayRetry, reconnectPolicy } from '../src/backoff.ts';
import { channelUrl } from '../src/channels.ts';

// Pure functions only: the behaviour tests beside this file run against a real engine.

describe('reconnect backoff (spec §2.9)', () => {
  const noJitter = () => 0.5;
  it('doubles from 1 s up to the 30 s cap', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((n) => backoffDelay(DEFAULT_RECONNECT, n, noJitter))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });
  it('spreads delays by ±30%', () => {
    expect(backoffDelay(DEFAULT_RECONNECT, 0, () => 0)).toBe(700);
    expect(backoffDelay(DEFAULT_RECONNECT, 0, () => 1)).toBe(1300);
  });
  it('retries forever by default, never with maxRetries 0, n times with n', () => {
    expect(mayRetry(DEFAULT_RECONNECT, 1_000_000)).toBe(true);
    expect(mayRetry(reconnectPolicy({ maxRetries: 0 }), 0)).toBe(false);
    const three = reconnectPolicy({ maxRetries: 3 });
    expect([0, 1, 2, 3].map((n) => mayRetry(three, n))).toEqual([true, true, true, false]);
  });
  it('ignores invalid options', () => {
    expect(reconnectPolicy({ initialDelayMs: Number.NaN, jitter: 5, multiplier: 0 })).toEqual({
      ...DEFAULT_RECONNECT,
      jitter: 1,
      multiplier: 1,
    });
  });
});

describe('small contracts', () => {
  it('builds channel URLs on the bus URL', () => {
    const ref = { channel_id: 'c-1', access_key: 'k/+=', direction: 'read' as const };
    expect(channelUrl('ws://127.0.0.1:49134', ref)).toBe('ws://127.0.0.1:49134/ws/channels/c-1?key=k%2F%2B%3D&dir=read');
    expect(channelUrl('wss://eng.example/bus/?token=t', { ...ref, direction: 'write' })).toBe(
      'wss://eng.example/bus/ws/channels/c-1?token=t&key=k%2F%2B%3D&dir=write',
    );
  });
  it('builds trigger actions like iii-sdk', () => {
    expect(TriggerAction.Void()).toEqual({ type: 'void' });
    expect(TriggerAction.Enqueue({ queue: 'jobs' })).toEqual({ type: 'enqueue', queue: 'jobs' });
  });
  it('reports the package version', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8'));
    expect(SDK_VERSION).toBe(pkg.version);
  });
  it('accepts both the ws class and the DOM WebSocket type as options.WebSocket', () => {
    // compile-time: both constructor shapes must type-check as the override
    const fromWs: WebSocketConstructor = WebSocket;
    const fromDom: WebSocketConstructor | undefined = (globalThis as { WebSocket?: typeof globalThis.WebSocket }).WebSocket;
    expect(fromWs).toBeTypeOf('function');
    expect(['undefined', 'function']).toContain(typeof fromDom);
  });
});
