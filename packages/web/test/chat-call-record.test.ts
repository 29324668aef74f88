import { describe, expect, it } from 'vitest';
import type { SessionGate } from '../src/api/chat-calls.ts';
import { describeDecision } from '../src/components/chat/call-record.tsx';
import { buildView, type CallView } from '../src/lib/chat/view.ts';

// issue 25 item 3: what a finished call card says about its decision, and only what is known.

const call = (over: Partial<CallView> = {}): CallView => ({
  key: 'e:0',
  id: 'call_1',
  functionId: 'orders::get',
  arguments: {},
  state: 'done',
  finishedAt: 2_000,
  ...over,
});
const gate = (over: Partial<SessionGate> = {}): SessionGate => ({ mode: 'manual', modeSetAt: 0, grants: new Map(), ...over });

describe('describeDecision', () => {
  it("names this console's decisions with their scope", () => {
    expect(describeDecision(call(), { outcome: 'allow', by: 'you', scope: 'once', at: 0 }, null)?.text).toMatch(
      /^Allowed by you · once · \d\d:\d\d$/,
    );
    expect(describeDecision(call(), { outcome: 'allow', by: 'you', scope: 'session', at: 0 }, null)?.text).toMatch(
      /^Allowed by you · for this session · /,
    );
    expect(describeDecision(call({ state: 'error', errorKind: 'denied' }), { outcome: 'deny', by: 'you', at: 0 }, null)?.tone).toBe('bad');
    expect(describeDecision(call(), { outcome: 'allow', by: 'person', at: 0 }, null)?.text).toMatch(/^Allowed by a person/);
  });

  it('without a decision: a grant or a mode only when in place before the call finished', () => {
    expect(describeDecision(call(), undefined, gate({ grants: new Map([['orders::get', 1_000]]) }))?.text).toMatch(
      /^Allowed by your grant for this session/,
    );
    expect(describeDecision(call(), undefined, gate({ grants: new Map([['orders::get', 3_000]]) }))?.text).toBe('Allowed without a prompt');
    expect(describeDecision(call(), undefined, gate({ mode: 'full', modeSetAt: 1_000 }))?.text).toBe('Allowed by mode full');
    expect(describeDecision(call(), undefined, gate({ mode: 'full', modeSetAt: 3_000 }))?.text).toBe('Allowed without a prompt');
    // a call refused by the policy or the gate, or never run: no claim about who decided
    expect(describeDecision(call({ state: 'error', errorKind: 'denied' }), undefined, gate())).toBeUndefined();
    expect(describeDecision(call({ state: 'cancelled' }), undefined, gate())).toBeUndefined();
  });
});

describe('a held call a person denied', () => {
  it('is a denied card with the reason, not a function error', () => {
    const entries = [
      {
        entry_id: 'a',
        revision: 0,
        message: {
          role: 'assistant',
          content: [{ type: 'function_call', id: 'c1', function_id: 'orders::get', arguments: {} }],
          stop_reason: 'tool_use',
        },
      },
      {
        entry_id: 'r',
        revision: 0,
        message: {
          role: 'function_result',
          function_call_id: 'c1',
          content: [{ type: 'text', text: 'orders::get was not run: denied: not now' }],
          is_error: true,
          details: { kind: 'denied', outcome: 'deny', reason: 'not now' },
          timestamp: 1234,
        },
      },
    ] as unknown as Parameters<typeof buildView>[0];
    const [item] = buildView(entries, { pending: new Set(), turnActive: false });
    const card = item?.kind === 'calls' ? item.calls[0] : undefined;
    expect(card).toMatchObject({ state: 'error', errorKind: 'denied', errorMessage: 'not now', finishedAt: 1234 });
  });
});
