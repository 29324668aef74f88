import { describe, expect, it } from 'vitest';
import { Leg, NEVER_CANCELLED } from '../src/leg.ts';

// A request's cancellation (leg.ts): what eng-mcp's 2026-07-28 calls hang their own abort on.
describe('Leg', () => {
  it('runs each listener once when cancelled, and not a removed one', () => {
    const leg = new Leg();
    const heard: string[] = [];
    leg.onCancel(() => heard.push('a'));
    const removeB = leg.onCancel(() => heard.push('b'));
    leg.onCancel(() => heard.push('c'));
    removeB();
    leg.cancel();
    leg.cancel();
    expect(heard).toEqual(['a', 'c']);
    expect(leg.cancelled).toBe(true);
  });

  it('runs every listener when one throws, then throws its error', () => {
    const leg = new Leg();
    const heard: string[] = [];
    leg.onCancel(() => {
      heard.push('a');
      throw new Error('first');
    });
    leg.onCancel(() => heard.push('b'));
    expect(() => leg.cancel()).toThrow('first');
    expect(heard).toEqual(['a', 'b']);
    expect(leg.cancelled).toBe(true);
  });

  it('runs a listener added after the cancellation at once', () => {
    const leg = new Leg();
    leg.cancel();
    let heard = 0;
    leg.onCancel(() => heard++);
    expect(heard).toBe(1);
  });

  it('NEVER_CANCELLED cannot be cancelled and keeps no listener', () => {
    let heard = 0;
    for (let i = 0; i < 1000; i++) NEVER_CANCELLED.onCancel(() => heard++)();
    NEVER_CANCELLED.cancel();
    expect(NEVER_CANCELLED.cancelled).toBe(false);
    expect(heard).toBe(0);
    expect((NEVER_CANCELLED as unknown as { listeners?: unknown[] }).listeners).toBeUndefined();
  });
});
