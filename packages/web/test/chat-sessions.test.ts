import { describe, expect, it } from 'vitest';
import { keepNewer, newConversationId, originOf, type SessionMeta } from '../src/api/chat-sessions.ts';

/** Issue 25 item 2: a conversation the console did not make is marked by where it came from. */
describe('conversation origin', () => {
  it("is none for the console's own sessions", () => {
    expect(originOf({ metadata: { surface: 'console' } })).toBeUndefined();
  });

  it("names the surface, origin, source or client from the session's metadata", () => {
    expect(originOf({ metadata: { surface: 'mcp' } })).toBe('mcp');
    expect(originOf({ metadata: { origin: 'api' } })).toBe('api');
    expect(originOf({ metadata: { source: ' cron ' } })).toBe('cron');
    expect(originOf({ metadata: { client: 'cli', surface: 'slack' } })).toBe('slack');
  });

  it('says sub-agent for a child session of a harness turn, other when nothing says', () => {
    expect(originOf({ metadata: { parent_session_id: 's_1', depth: 1 } })).toBe('sub-agent');
    expect(originOf({})).toBe('other');
    expect(originOf({ metadata: { surface: '', owner: 'u1' } })).toBe('other');
  });

  it('new conversations get console-<uuid> ids, each its own', () => {
    const a = newConversationId();
    expect(a).toMatch(/^console-[0-9a-f-]{36}$/);
    expect(newConversationId()).not.toBe(a);
  });
});

describe('the conversation list read again', () => {
  const meta = (id: string, status: SessionMeta['status'], updated_at: number, title = ''): SessionMeta => ({
    session_id: id,
    title,
    status,
    created_at: 0,
    updated_at,
    message_count: 1,
  });

  it('keeps what a live event said since the read began (a turn started while the list was read)', () => {
    const listed = [meta('a', 'idle', 100, 'A'), meta('b', 'idle', 90)];
    const cached = [meta('a', 'working', 120, 'A'), meta('b', 'idle', 90)];
    expect(keepNewer(listed, cached).map((s) => [s.session_id, s.status])).toEqual([
      ['a', 'working'],
      ['b', 'idle'],
    ]);
  });

  it('takes the read when it is as new or newer, and lists what the cache never had', () => {
    const listed = [meta('c', 'idle', 300), meta('a', 'done', 200, 'renamed')];
    const cached = [meta('a', 'working', 150)];
    expect(keepNewer(listed, cached)).toEqual(listed);
    expect(keepNewer(listed, undefined)).toBe(listed);
  });
});
