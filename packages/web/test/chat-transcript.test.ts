import { describe, expect, it } from 'vitest';
import { type ConversationState, reduceEvent } from '../src/api/chat-conversation.ts';
import { attachmentBlocks, parseAttachedFile } from '../src/lib/chat/attachments.ts';
import { blockSpans, extendSpans, fencedCode, splitBlocks } from '../src/lib/chat/markdown-blocks.ts';
import { effortOptions, effortsOf, groupModels } from '../src/lib/chat/models.ts';
import { contextUsage, estimateContextTokens } from '../src/lib/chat/tokens.ts';
import { applyEntry, EMPTY_TRANSCRIPT, type Entry, entriesOf, mergeSnapshot, titleFrom } from '../src/lib/chat/transcript.ts';
import { buildView, keepStable } from '../src/lib/chat/view.ts';

// The chat's browser-side logic (console-worker.md §2.3, §2.6, §2.9): revision reconciliation of
// snapshot and events, the context estimate and its thresholds, segments and call states.

const user = (id: string, text: string, revision = 0): Entry => ({
  entry_id: id,
  parent_id: null,
  revision,
  message: { role: 'user', content: [{ type: 'text', text }] },
});
const assistant = (id: string, text: string, revision: number, extra: Partial<NonNullable<Entry['message']>> = {}): Entry => ({
  entry_id: id,
  revision,
  message: { role: 'assistant', content: [{ type: 'text', text }], ...extra },
});
const texts = (entries: Entry[]) => entries.map((e) => (e.message?.content[0] as { text: string } | undefined)?.text);

describe('revision reconciliation', () => {
  it('keeps the highest revision of an entry whatever the order events arrive in', () => {
    let t = applyEntry(EMPTY_TRANSCRIPT, user('u1', 'hi'));
    t = applyEntry(t, assistant('a1', 'Hel', 1));
    t = applyEntry(t, assistant('a1', 'Hello wor', 3));
    const stale = applyEntry(t, assistant('a1', 'Hello', 2));
    expect(stale).toBe(t); // an older update changes nothing, not even the object
    expect(texts(entriesOf(stale))).toEqual(['hi', 'Hello wor']);
    expect(applyEntry(t, assistant('a1', 'Hello wor', 3))).toBe(t);
  });

  it('an update keeps the envelope the added event brought', () => {
    let t = applyEntry(EMPTY_TRANSCRIPT, { ...assistant('a1', '', 0), parent_id: 'u1', origin: { turn_id: 't1' }, timestamp: 5 });
    t = applyEntry(t, assistant('a1', 'streamed', 4));
    expect(t.byId.get('a1')).toMatchObject({ parent_id: 'u1', origin: { turn_id: 't1' }, timestamp: 5, revision: 4 });
  });

  it('merges a snapshot read while events streamed: newer events win, later entries stay after it', () => {
    // events: the assistant reached revision 7 and a new user message arrived
    let t = applyEntry(EMPTY_TRANSCRIPT, assistant('a1', 'long answer so far', 7));
    t = applyEntry(t, { ...user('u2', 'next question'), parent_id: 'a1' });
    // the snapshot was read at revision 5 and does not know u2 yet
    const merged = mergeSnapshot(t, [user('u1', 'question'), assistant('a1', 'long ans', 5)]);
    expect(merged.order).toEqual(['u1', 'a1', 'u2']);
    expect(texts(entriesOf(merged))).toEqual(['question', 'long answer so far', 'next question']);
    // a snapshot newer than the events wins
    const newer = mergeSnapshot(t, [user('u1', 'question'), assistant('a1', 'long answer so far, finished', 9)]);
    expect(texts(entriesOf(newer))[1]).toBe('long answer so far, finished');
  });

  it('an optimistic message (revision -1) is replaced by the stored one in place', () => {
    let t = applyEntry(EMPTY_TRANSCRIPT, user('u1', 'first'));
    t = applyEntry(t, { ...user('e_idem_k', 'typed'), revision: -1 });
    t = applyEntry(t, { ...user('e_idem_k', 'typed'), revision: 0, origin: { turn_id: 't' } });
    expect(t.order).toEqual(['u1', 'e_idem_k']);
    expect(t.byId.get('e_idem_k')?.revision).toBe(0);
  });

  it('titles a conversation from the first non-empty line, clipped', () => {
    expect(titleFrom('\n  Deploy the orders worker \nthen test')).toBe('Deploy the orders worker');
    expect(titleFrom('x'.repeat(80)).length).toBe(60);
  });
});

describe('token estimate and thresholds', () => {
  it('counts characters / 4 over text, thoughts, function inputs and outputs', () => {
    const entries: Entry[] = [
      user('u1', 'a'.repeat(400)),
      {
        entry_id: 'a1',
        revision: 1,
        message: {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'b'.repeat(80) },
            { type: 'function_call', id: 'c1', function_id: 'orders::get', arguments: { id: 42 } },
          ],
        },
      },
      {
        entry_id: 'r1',
        revision: 0,
        message: { role: 'function_result', function_call_id: 'c1', content: [{ type: 'text', text: 'c'.repeat(100) }] },
      },
    ];
    const chars = 400 + 80 + 'orders::get'.length + JSON.stringify({ id: 42 }).length + 100;
    expect(estimateContextTokens(entries)).toBe(Math.ceil(chars / 4));
  });

  it('after a compaction, counts the summary and the kept tail only', () => {
    const entries: Entry[] = [
      user('u1', 'x'.repeat(4000)),
      assistant('a1', 'y'.repeat(4000), 2),
      user('u2', 'z'.repeat(40)),
      assistant('a2', 'w'.repeat(40), 1),
      {
        entry_id: 'c1',
        revision: 0,
        custom: { custom_type: 'compaction', data: { summary: 's'.repeat(200), tail_start_entry_id: 'u2', tokens_before: 2020 } },
      },
      user('u3', 'q'.repeat(40)),
    ];
    expect(estimateContextTokens(entries)).toBe(Math.ceil((200 + 40 + 40 + 40) / 4));
  });

  it('warns at 75 %, is in danger at 90 %, and shows only the count without a window', () => {
    expect(contextUsage(74_999, 100_000).level).toBe('ok');
    expect(contextUsage(75_000, 100_000).level).toBe('warn');
    expect(contextUsage(89_999, 100_000).level).toBe('warn');
    expect(contextUsage(90_000, 100_000)).toMatchObject({ level: 'danger', ratio: 0.9 });
    expect(contextUsage(5000, undefined)).toEqual({ tokens: 5000, level: 'unknown' });
    expect(contextUsage(5000, 0).level).toBe('unknown');
  });
});

describe('the transcript view', () => {
  const call = (id: string, fn = 'orders::get', args: unknown = { id: 1 }) => ({
    type: 'function_call' as const,
    id,
    function_id: fn,
    arguments: args,
  });
  const result = (id: string, text: string, isError = false, details?: unknown): Entry => ({
    entry_id: `r_${id}`,
    revision: 0,
    message: {
      role: 'function_result',
      function_call_id: id,
      function_id: 'orders::get',
      content: [{ type: 'text', text }],
      is_error: isError,
      details,
    },
  });

  it('splits assistant entries into segments and groups consecutive calls across steps', () => {
    const entries: Entry[] = [
      user('u1', 'go'),
      {
        entry_id: 'a1',
        revision: 3,
        message: { role: 'assistant', content: [{ type: 'thinking', text: 'hmm' }, { type: 'text', text: 'Looking.' }, call('c1')] },
      },
      result('c1', '{"ok":true}'),
      { entry_id: 'a2', revision: 2, message: { role: 'assistant', content: [call('c2'), call('c3')] } },
      result('c2', 'Error: boom', true, { error: { kind: 'function_error', message: 'boom' } }),
      result('c3', 'Denied: no', true, { error: { kind: 'denied', message: 'no' } }),
      assistant('a3', 'Done.', 1, { stop_reason: 'end' }),
    ];
    const view = buildView(entries, { pending: new Set(), turnActive: false });
    expect(view.map((v) => v.kind)).toEqual(['user', 'thought', 'text', 'calls', 'text', 'actions']);
    const group = view[3];
    if (group?.kind !== 'calls') throw new Error('expected calls');
    expect(group.calls.map((c) => [c.id, c.state, c.errorKind])).toEqual([
      ['c1', 'done', undefined],
      ['c2', 'error', 'function_error'],
      ['c3', 'error', 'denied'],
    ]);
    expect(group.calls[0]?.output).toEqual({ ok: true });
  });

  it('call states: streaming, pending, running, cancelled; stop notices', () => {
    const entries: Entry[] = [
      { entry_id: 'a1', revision: 1, message: { role: 'assistant', content: [call('p1'), call('r1')] } },
      {
        entry_id: 'a2',
        revision: 1,
        message: {
          role: 'assistant',
          content: [
            { type: 'function_call', id: 's1', function_id: 'agent_trigger', arguments: { _streaming: '{"function": "orders::li' } },
          ],
        },
      },
    ];
    const live = buildView(entries, { pending: new Set(['p1']), turnActive: true });
    const calls = live.flatMap((v) => (v.kind === 'calls' ? v.calls : []));
    expect(calls.map((c) => [c.state, c.functionId])).toEqual([
      ['pending', 'orders::get'],
      ['running', 'orders::get'],
      ['streaming', 'orders::li'],
    ]);
    const ended = buildView([...entries, assistant('a3', 'partial', 2, { stop_reason: 'aborted' })], {
      pending: new Set(),
      turnActive: false,
    });
    expect(ended.flatMap((v) => (v.kind === 'calls' ? v.calls.map((c) => c.state) : []))).toEqual(['cancelled', 'cancelled', 'streaming']);
    expect(ended.at(-2)).toMatchObject({ kind: 'notice', reason: 'aborted' });
    expect(ended.at(-1)).toMatchObject({ kind: 'actions', text: 'partial', regenerate: true });
  });

  it('keeps unchanged items identical between builds, so their rows do not render again', () => {
    const one = [user('u1', 'q'), assistant('a1', 'Hel', 1)];
    const first = buildView(one, { pending: new Set(), turnActive: true });
    const t = applyEntry(applyEntry(applyEntry(EMPTY_TRANSCRIPT, one[0] as Entry), one[1] as Entry), assistant('a1', 'Hello', 2));
    const second = keepStable(first, buildView(entriesOf(t), { pending: new Set(), turnActive: true }));
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(keepStable(second, buildView(entriesOf(t), { pending: new Set(), turnActive: true }))).toBe(second);
  });
});

describe('streaming Markdown blocks', () => {
  it('cuts at blank lines outside fences; an open fence stays one block', () => {
    expect(splitBlocks('# Title\n\npara one\nstill one\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nlast')).toEqual([
      '# Title',
      'para one\nstill one',
      '```js\nconst a = 1;\n\nconst b = 2;\n```',
      'last',
    ]);
    expect(splitBlocks('text\n\n```py\nprint(1)\n\nprint(2)')).toEqual(['text', '```py\nprint(1)\n\nprint(2)']);
  });

  it('a growing text is cut again from its last block only, with the same result as a whole cut', () => {
    const full = '# Title\n\npara one\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n- item\n- item 2\n\nlast words';
    let previous: { text: string; spans: ReturnType<typeof blockSpans> } | undefined;
    // every prefix, as a stream delivers it (fences opening and closing, blank lines, lists)
    for (let n = 1; n <= full.length; n++) {
      const text = full.slice(0, n);
      const spans = extendSpans(previous, text);
      expect(spans).toEqual(blockSpans(text));
      expect(spans.map((s) => s.text)).toEqual(splitBlocks(text));
      for (const s of spans) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
      previous = { text, spans };
    }
    // a text that does not extend the previous one (an edit) is cut whole
    expect(extendSpans(previous, 'other\n\ntext').map((s) => s.text)).toEqual(['other', 'text']);
  });

  it('recognises a block that is one fenced code block (closed or still streaming), and nothing else', () => {
    expect(fencedCode('```ts\nconst a = 1;\n```')).toEqual({ language: 'ts', code: 'const a = 1;', closed: true });
    expect(fencedCode('```TS title="x"\nconst a = 1;\n\nconst b')).toEqual({
      language: 'ts',
      code: 'const a = 1;\n\nconst b',
      closed: false,
    });
    expect(fencedCode('~~~~\nplain\n~~~~')).toEqual({ language: undefined, code: 'plain', closed: true });
    // a shorter or different closing marker does not close it
    expect(fencedCode('````\na\n```\nb')).toEqual({ language: undefined, code: 'a\n```\nb', closed: false });
    // text after the closing fence, an indented fence or a paragraph: Markdown, not a bare code block
    expect(fencedCode('```\na\n```\nafter')).toBeUndefined();
    expect(fencedCode('  ```\na\n```')).toBeUndefined();
    expect(fencedCode('para\n```\na\n```')).toBeUndefined();
  });
});

describe('live events', () => {
  const base: ConversationState = { transcript: EMPTY_TRANSCRIPT, status: 'idle', title: '', pending: new Set(), loaded: true };
  it('applies a batch of events in order: messages by revision, status, title, held calls', () => {
    const events = [
      { type: 'message' as const, session_id: 's', entry: assistant('a1', 'Hel', 1) },
      { type: 'status' as const, session_id: 's', status: 'working' },
      { type: 'message' as const, session_id: 's', entry: assistant('a1', 'Hello', 3) },
      // an older revision arriving late changes nothing
      { type: 'message' as const, session_id: 's', entry: assistant('a1', 'Hell', 2) },
      { type: 'meta' as const, session_id: 's', title: 'Greeting' },
      { type: 'pending-created' as const, session_id: 's', function_call_id: 'c1', function_id: 'f::x' },
      { type: 'pending-created' as const, session_id: 's', function_call_id: 'c2', function_id: 'f::x' },
      { type: 'pending-resolved' as const, session_id: 's', function_call_id: 'c1', outcome: 'approved' },
    ];
    const s = events.reduce(reduceEvent, base);
    expect(entriesOf(s.transcript).map((e) => e.message?.content)).toEqual([[{ type: 'text', text: 'Hello' }]]);
    expect(s.status).toBe('working');
    expect(s.title).toBe('Greeting');
    expect([...s.pending]).toEqual(['c2']);
    const done = reduceEvent(s, { type: 'turn-completed', session_id: 's', turn_id: 't', status: 'completed' });
    expect(done.pending.size).toBe(0);
    // nothing new: the same state object (no render)
    expect(reduceEvent(s, { type: 'message', session_id: 's', entry: assistant('a1', 'Hello', 3) })).toBe(s);
  });
});

describe('models and attachments', () => {
  it('groups by provider with not-configured and not-loaded groups, or the fallback of three providers', () => {
    const groups = groupModels(
      [
        { id: 'gpt-4o-mini', provider: 'openai', display_name: 'GPT-4o mini', context_window: 128_000 },
        { id: 'gpt-4o', provider: 'openai', display_name: 'GPT-4o', context_window: 128_000 },
      ],
      [
        { id: 'openai', display_name: 'OpenAI', configured: true, available: true },
        { id: 'anthropic', display_name: 'Anthropic', configured: false, available: true, credential_env_var: 'ANTHROPIC_API_KEY' },
        { id: 'google', display_name: 'Google', configured: true, available: false },
      ],
    );
    expect(groups.map((g) => [g.provider, g.state, g.models.map((m) => m.id)])).toEqual([
      ['anthropic', 'not-configured', []],
      ['google', 'not-loaded', []],
      ['openai', 'ready', ['gpt-4o', 'gpt-4o-mini']],
    ]);
    expect(new Set(groupModels(undefined, undefined).map((g) => g.provider))).toEqual(new Set(['openai', 'anthropic', 'google']));
  });

  it('offers an effort row only where the model reasons, and sends it as provider options', () => {
    const o4 = { id: 'o4-mini', provider: 'openai', context_window: 200_000, reasoning_efforts: [{ effort: 'low' }, { effort: 'high' }] };
    expect(effortsOf(o4)).toEqual(['default', 'low', 'high']);
    expect(effortsOf({ id: 'c', provider: 'anthropic', context_window: 1, supports_thinking: true })).toContain('xhigh');
    expect(effortsOf({ id: 'g', provider: 'openai', context_window: 1 })).toEqual([]);
    expect(effortOptions(o4, 'high')).toEqual({ provider_options: { openai: { reasoning_effort: 'high' } }, thinking_level: 'high' });
    expect(effortOptions(o4, 'default')).toEqual({});
  });

  it('inlines text files, sends images only to vision models, and names what it refused', () => {
    const files = [
      { id: '1', name: 'notes.md', mime: 'text/markdown', size: 5, kind: 'text' as const, data: '# hi' },
      { id: '2', name: 'dot.png', mime: 'image/png', size: 3, kind: 'image' as const, data: 'AAAA' },
    ];
    const withVision = attachmentBlocks(files, { vision: true, modelLabel: 'GPT-4o', imageIds: new Map([['2', 'a_1']]) });
    expect(withVision[1]).toEqual({ type: 'image', mime: 'image/png', data: 'AAAA', attachment_id: 'a_1' });
    expect(parseAttachedFile((withVision[0] as { text: string }).text)).toEqual({ name: 'notes.md', mime: 'text/markdown', body: '# hi' });
    const without = attachmentBlocks(files, { vision: false, modelLabel: 'local-small' });
    expect(without.every((b) => b.type === 'text')).toBe(true);
    expect(parseAttachedFile((without[1] as { text: string }).text)?.error).toBe('not sent: local-small does not read images');
  });
});
