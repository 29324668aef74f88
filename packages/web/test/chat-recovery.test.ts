import { describe, expect, it } from 'vitest';
import { applyEntry, EMPTY_TRANSCRIPT, type Entry, entriesOf, mergeSnapshot, type Transcript } from '../src/lib/chat/transcript.ts';
import { buildView, type ViewItem } from '../src/lib/chat/view.ts';

// Failed turns are not a dead end (issue 25 item 4), the browser's side: what the transcript offers
// (Copy, Edit on the last message, Regenerate on the last answer, Retry and the provider's settings
// on a failed one), and how it follows a Regenerate or an Edit: the new entries branch from an
// earlier one, and what they replace leaves the transcript, whether the events or a re-read tell it.

const user = (id: string, text: string, parent: string | null, revision = 0): Entry => ({
  entry_id: id,
  parent_id: parent,
  revision,
  message: { role: 'user', content: [{ type: 'text', text }] },
});
const assistant = (id: string, parent: string, content: NonNullable<Entry['message']>['content'], extra = {}): Entry => ({
  entry_id: id,
  parent_id: parent,
  revision: 1,
  message: { role: 'assistant', content, stop_reason: 'end', ...extra },
});
const said = (id: string, parent: string, text: string, extra = {}) => assistant(id, parent, [{ type: 'text', text }], extra);
const result = (id: string, parent: string, callId: string): Entry => ({
  entry_id: id,
  parent_id: parent,
  revision: 0,
  message: { role: 'function_result', function_call_id: callId, function_id: 'orders::get', content: [{ type: 'text', text: '{}' }] },
});
const build = (entries: Entry[]) => entries.reduce<Transcript>((t, e) => applyEntry(t, e), EMPTY_TRANSCRIPT);
const ids = (t: Transcript) => entriesOf(t).map((e) => e.entry_id);

describe('a rewind as the transcript follows it', () => {
  const conversation = [
    user('u1', 'Capital of France?', null),
    said('a1', 'u1', 'Paris.'),
    user('u2', 'What is 2+3?', 'a1'),
    assistant('a2', 'u2', [{ type: 'function_call', id: 'c1', function_id: 'orders::get' }], { stop_reason: 'function_call' }),
    result('r2', 'a2', 'c1'),
    said('a3', 'r2', 'OLD: five.'),
  ];

  it('Regenerate: a new answer under the question replaces the old answer, its call and its result', () => {
    const t = applyEntry(build(conversation), { ...said('n1', 'u2', ''), revision: 0 });
    expect(ids(t)).toEqual(['u1', 'a1', 'u2', 'n1']);
    for (const gone of ['a2', 'r2', 'a3']) expect(t.byId.has(gone)).toBe(false);
    // later updates of the new answer change it in place
    const streamed = applyEntry(t, {
      entry_id: 'n1',
      revision: 3,
      message: { role: 'assistant', content: [{ type: 'text', text: '5.' }] },
    });
    expect(ids(streamed)).toEqual(['u1', 'a1', 'u2', 'n1']);
  });

  it('Edit: a new message under the previous answer replaces the old message and everything after it', () => {
    expect(ids(applyEntry(build(conversation), user('e_idem_x', 'What is 3+4?', 'a1')))).toEqual(['u1', 'a1', 'e_idem_x']);
    // the first message edited: a new root
    expect(ids(applyEntry(build(conversation), user('root2', 'Capital of Italy?', null)))).toEqual(['root2']);
    // an entry continuing the path, or only shown so far, replaces nothing
    const t = build(conversation);
    expect(ids(applyEntry(t, user('u3', 'thanks', 'a3')))).toEqual(['u1', 'a1', 'u2', 'a2', 'r2', 'a3', 'u3']);
    // a message shown before it is stored (revision -1) does not know its parent
    const shown = applyEntry(t, { entry_id: 'e_idem_q', revision: -1, message: { role: 'user', content: [{ type: 'text', text: 'q' }] } });
    expect(ids(shown)).toEqual(['u1', 'a1', 'u2', 'a2', 'r2', 'a3', 'e_idem_q']);
    // and an entry with an unknown parent is added at the end, as before
    expect(ids(applyEntry(t, said('x', 'elsewhere', 'x')))).toEqual(['u1', 'a1', 'u2', 'a2', 'r2', 'a3', 'x']);
  });

  it('a re-read after an edit drops what the store no longer has on the path, and keeps what came after it', () => {
    const t = applyEntry(build(conversation), { entry_id: 'e_idem_q', revision: -1, message: { role: 'user', content: [] } });
    const merged = mergeSnapshot(t, [conversation[0] as Entry, conversation[1] as Entry, user('e_idem_x', 'What is 3+4?', 'a1')]);
    // u2 and its answer are gone (u2's parent is not the path's end; the rest follow u2); the shown message stays
    expect(ids(merged)).toEqual(['u1', 'a1', 'e_idem_x', 'e_idem_q']);
    // a snapshot read before the newest events keeps them when they continue its path
    const later = mergeSnapshot(build(conversation), conversation.slice(0, 4));
    expect(ids(later)).toEqual(['u1', 'a1', 'u2', 'a2', 'r2', 'a3']);
  });
});

describe('what the transcript offers', () => {
  const idle = { pending: new Set<string>(), turnActive: false };
  const of = <K extends ViewItem['kind']>(items: ViewItem[], kind: K) =>
    items.filter((i): i is Extract<ViewItem, { kind: K }> => i.kind === kind);

  it('each answer ends with Copy of its whole text; only the last, finished one offers Regenerate', () => {
    const entries = [
      user('u1', 'one', null),
      said('a1', 'u1', 'First **answer**.'),
      user('u2', 'two', 'a1'),
      assistant('a2', 'u2', [
        { type: 'text', text: 'Looking it up.' },
        { type: 'function_call', id: 'c1', function_id: 'orders::get' },
      ]),
      result('r2', 'a2', 'c1'),
      said('a3', 'r2', 'Found it.'),
    ];
    const view = buildView(entries, idle);
    expect(view.map((v) => v.kind)).toEqual(['user', 'text', 'actions', 'user', 'text', 'calls', 'text', 'actions']);
    expect(of(view, 'actions')).toEqual([
      { kind: 'actions', key: 'actions:a1', entryId: 'a1', text: 'First **answer**.', regenerate: false },
      { kind: 'actions', key: 'actions:a3', entryId: 'a3', text: 'Looking it up.\n\nFound it.', regenerate: true },
    ]);
    // only the last user message can be edited
    expect(of(view, 'user').map((u) => u.editable)).toEqual([undefined, true]);

    // while a turn runs: no Regenerate, no Edit, and the running answer has no actions yet
    const running = buildView(
      [
        ...entries,
        user('u3', 'three', 'a3'),
        { ...said('a4', 'u3', 'Stre'), message: { role: 'assistant', content: [{ type: 'text', text: 'Stre' }] } },
      ],
      {
        pending: new Set(),
        turnActive: true,
      },
    );
    expect(of(running, 'actions').map((a) => [a.entryId, a.regenerate])).toEqual([
      ['a1', false],
      ['a3', false],
    ]);
    expect(of(running, 'user').some((u) => u.editable)).toBe(false);
    // nor a message only shown so far, or queued behind a step
    const shown = buildView([said('a0', 'x', 'hi'), { ...user('e_idem_k', 'typed', null), revision: -1 }], idle);
    expect(of(shown, 'user')[0]?.editable).toBeUndefined();
    const queued = buildView([{ ...user('q', 'later', null), origin: { queued: true } }], idle);
    expect(of(queued, 'user')[0]?.editable).toBeUndefined();
  });

  it('a failed last answer: Retry in its notice, the provider named for a 401, no Regenerate', () => {
    const entries = [
      user('u1', 'hello', null),
      assistant('a1', 'u1', [], {
        stop_reason: 'error',
        error_kind: 'auth_expired',
        error_message: '401 Incorrect API key provided: [redacted]',
        provider: 'openai',
      }),
    ];
    const view = buildView(entries, idle);
    expect(view.map((v) => v.kind)).toEqual(['user', 'notice']);
    expect(of(view, 'notice')[0]).toMatchObject({ reason: 'error', errorKind: 'auth_expired', provider: 'openai', retry: true });
    // an earlier failed answer is history: no Retry there
    const later = buildView([...entries, user('u2', 'again', 'a1'), said('a2', 'u2', 'Hi.')], idle);
    expect(of(later, 'notice')[0]?.retry).toBeUndefined();
    expect(of(later, 'actions').at(-1)).toMatchObject({ entryId: 'a2', regenerate: true });
    // a stopped answer is not a failure: Regenerate
    const stopped = buildView([user('u1', 'hello', null), said('a1', 'u1', 'Hal', { stop_reason: 'aborted' })], idle);
    expect(of(stopped, 'notice')[0]?.retry).toBeUndefined();
    expect(of(stopped, 'actions')[0]).toMatchObject({ text: 'Hal', regenerate: true });
  });
});
