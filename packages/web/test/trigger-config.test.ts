import { describe, expect, it } from 'vitest';
import { summarise } from '../src/lib/trigger-config.ts';

// the Triggers page's Path / Config column (seed 2.3)
describe('summarise', () => {
  it('shows the route, schedule, topic, scope or stream a trigger listens to', () => {
    expect(summarise('http', { api_path: 'orders/:id', http_method: 'GET' }, '?')).toBe('GET /orders/:id');
    expect(summarise('cron', { expression: '*/30 * * * * *' }, '?')).toBe('*/30 * * * * *');
    expect(summarise('subscribe', { topic: 'order.created' }, '?')).toBe('order.created');
    expect(summarise('state', { scope: 'orders', key: 'a' }, '?')).toBe('scope orders / a');
    expect(summarise('stream', { stream_name: 'orders', group_id: 'live' }, '?')).toBe('orders / live');
  });

  it('says what a trigger without a filter fires for', () => {
    expect(summarise('stream:join', {}, '?')).toBe('every stream');
    expect(summarise('stream:leave', {}, '?')).toBe('every stream');
    expect(summarise('stream', {}, '?')).toBe('every stream');
    expect(summarise('state', {}, '?')).toBe('every scope');
    expect(summarise('custom', {}, '?')).toBe('—');
    expect(summarise('custom', { x: 1 }, 'x=1')).toBe('x=1');
  });
});
