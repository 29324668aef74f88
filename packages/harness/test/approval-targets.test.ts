import { describe, expect, it } from 'vitest';
import { resolveChain, type TargetLookup } from '../src/approval/targets.ts';

// What the gate sees of a call: every function it would run, the grant key of that exact chain,
// and a refusal where it cannot see through. The lookup stands in for the engine's introspection
// (the hostile-model test runs the same resolution against a real engine).

const lookup: TargetLookup = {
  async subscribers(type, topic) {
    if (type === 'subscribe' && topic === 'orders') return ['audit::record', 'mail::send'];
    if (type === 'durable:subscriber' && topic === 'jobs') return ['jobs::run'];
    return [];
  },
  async triggerFunction(id) {
    return { 'cron-1': 'reports::daily', 'bind-gate': 'approval::on-turn-completed' }[id];
  },
};

describe('resolveChain', () => {
  it('a plain call is itself', async () => {
    expect(await resolveChain('orders::list', {}, lookup)).toEqual({ functions: ['orders::list'], key: 'orders::list' });
  });

  it('unwraps invoke, enqueue and bridge calls, nested, into the chain and its key', async () => {
    const chain = await resolveChain(
      'engine::functions::invoke',
      {
        function_id: 'engine::queue::enqueue',
        payload: { queue: 'q', function_id: 'bridge.invoke', data: { function_id: 'orders::ship' } },
      },
      lookup,
    );
    expect(chain).toEqual({
      functions: ['engine::functions::invoke', 'engine::queue::enqueue', 'bridge.invoke', 'orders::ship'],
      key: 'engine::functions::invoke(engine::queue::enqueue(bridge.invoke(orders::ship)))',
    });
  });

  it('a publish runs every subscriber of its topic; a durable publish every durable subscriber', async () => {
    expect(await resolveChain('publish', { topic: 'orders', data: {} }, lookup)).toEqual({
      functions: ['publish', 'audit::record', 'mail::send'],
      key: 'publish(topic orders: audit::record, topic orders: mail::send)',
    });
    expect((await resolveChain('iii::durable::publish', { topic: 'jobs' }, lookup)).functions).toEqual([
      'iii::durable::publish',
      'jobs::run',
    ]);
    expect((await resolveChain('publish', {}, lookup)).refusal).toContain('names no topic');
  });

  it('a trigger binding, a manual cron firing and an unbinding are judged by the function they reach', async () => {
    expect(await resolveChain('engine::register_trigger', { trigger_type: 'cron', function_id: 'reports::daily' }, lookup)).toEqual({
      functions: ['engine::register_trigger', 'reports::daily'],
      key: 'engine::register_trigger(trigger cron: reports::daily)',
    });
    // bound to a wrapper, the trigger would call whatever its future events name: not allowed
    const bound = await resolveChain(
      'engine::register_trigger',
      { trigger_type: 'subscribe', function_id: 'engine::functions::invoke' },
      lookup,
    );
    expect(bound.refusal).toContain('the gate cannot see');
    expect((await resolveChain('eng::cron::trigger_now', { trigger_id: 'cron-1' }, lookup)).functions).toEqual([
      'eng::cron::trigger_now',
      'reports::daily',
    ]);
    expect((await resolveChain('engine::unregister_trigger', { id: 'bind-gate' }, lookup)).functions).toContain(
      'approval::on-turn-completed',
    );
  });

  it('refuses state writes to the chat stack scopes, opaque wrappers, bad ids, deep nesting and failed lookups', async () => {
    expect((await resolveChain('state::set', { scope: 'approval-gate:settings', key: 's', value: {} }, lookup)).refusal).toContain(
      "chat stack's own records",
    );
    expect((await resolveChain('state::delete', { scope: 'session-manager:entries:s1', key: 'e' }, lookup)).refusal).toBeDefined();
    expect((await resolveChain('state::set', { scope: 'orders', key: 'o', value: 1 }, lookup)).refusal).toBeUndefined();
    expect((await resolveChain('iii::queue::redrive', { queue: 'q' }, lookup)).refusal).toContain('re-runs calls');
    expect((await resolveChain('mcp::handler', {}, lookup)).refusal).toContain('MCP');
    for (const bad of ['*', 'a b', '', 'fn(x)', 'x'.repeat(300), 42, null])
      expect((await resolveChain(bad, {}, lookup)).refusal, String(bad)).toContain('not a valid function id');
    expect((await resolveChain('engine::functions::invoke', { function_id: '*' }, lookup)).refusal).toContain('not a valid function id');
    let deep: unknown = { function_id: 'orders::list' };
    for (let i = 0; i < 12; i++) deep = { function_id: 'engine::functions::invoke', payload: deep };
    expect((await resolveChain('engine::functions::invoke', deep, lookup)).refusal).toContain('nested more than');
    const failing: TargetLookup = { ...lookup, subscribers: () => Promise.reject(new Error('engine gone')) };
    expect((await resolveChain('publish', { topic: 'orders' }, failing)).refusal).toContain('engine gone');
  });
});
