import { describe, expect, it } from 'vitest';
import { decodeMessage, MessageSchema } from '../src/index.ts';

const id = '3f0c2a8e-1b2c-4d5e-8f90-0123456789ab';

/** The hand-written fast path must agree with the zod schema on every frame. */
function agree(frame: unknown): void {
  const fast = decodeMessage(JSON.stringify(frame));
  const slow = MessageSchema.safeParse(frame);
  expect(fast?.ok).toBe(slow.success);
  if (fast?.ok && slow.success) expect(fast.message).toEqual(slow.data);
}

describe('decodeMessage on the call path', () => {
  it('accepts what the schema accepts, with the same output', () => {
    agree({ type: 'invokefunction', invocation_id: id, function_id: 'a::b', data: { x: 1 }, extra: 'stripped' });
    agree({ type: 'invokefunction', function_id: 'a::b', action: { type: 'void' } });
    agree({
      type: 'invokefunction',
      invocation_id: null,
      function_id: 'a::b',
      action: { type: 'enqueue', queue: 'q', more: 1 },
      metadata: { t: 1 },
    });
    agree({ type: 'invokefunction', invocation_id: id, function_id: 'a::b', traceparent: null, baggage: 'k=v', action: null });
    agree({ type: 'invocationresult', invocation_id: id, result: [1, 2] });
    agree({
      type: 'invocationresult',
      invocation_id: id,
      function_id: 'a::b',
      error: { code: 'x', message: 'y', stacktrace: 's', other: 1 },
    });
    agree({ type: 'invocationresult', invocation_id: id, error: null, traceparent: '00-x' });
  });

  it('rejects what the schema rejects, with the schema naming the field', () => {
    for (const frame of [
      { type: 'invokefunction', invocation_id: 'nope', function_id: 'a::b' },
      { type: 'invokefunction', function_id: '' },
      { type: 'invokefunction', function_id: 7 },
      { type: 'invokefunction', function_id: 'a', action: { type: 'enqueue' } },
      { type: 'invokefunction', function_id: 'a', action: { type: 'warp' } },
      { type: 'invokefunction', function_id: 'a', traceparent: 5 },
      { type: 'invocationresult', invocation_id: id, error: { code: 1, message: 'm' } },
      { type: 'invocationresult' },
    ]) {
      agree(frame);
      const decoded = decodeMessage(JSON.stringify(frame));
      expect(decoded?.ok).toBe(false);
      if (decoded && !decoded.ok) expect(decoded.reason).toMatch(/invalid "(invokefunction|invocationresult)" frame: \w+/);
    }
  });
});
