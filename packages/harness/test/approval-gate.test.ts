/**
 * The approval gate (`eng-chat approval`) against a real engine with the session store: the
 * decision order of console-worker.md §2.7 (human-only functions, modes, grants, rules from the
 * approval-gate configuration entry, hot-reloaded), held calls answered after a person decides,
 * pending-created / pending-resolved exactly once per record, timeouts, the harness hook
 * callback, aborts on session delete, a restart of the worker, and bad input.
 */
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { modelFunctionPolicy } from '../src/approval/index.ts';
import { type RoleProcess, recordEvents, startRole, testClient } from '../src/shared/test-support.ts';

let engine: EngineProcess;
let sessions: RoleProcess;
let gate: RoleProcess;
let c: EngClient;
const call = <T = any>(fn: string, payload: unknown, timeoutMs = 30_000) => c.call<T>(fn, payload, { timeoutMs });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const callId = () => `fc_${Date.now()}_${n++}`;
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to fail');
}
const request = (session_id: string, function_id: string, extra: object = {}) =>
  call('approval::request', { session_id, turn_id: 't1', call: { id: callId(), function_id, arguments: { path: '/tmp/x' } }, ...extra });

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: '  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n',
  });
  sessions = startRole(engine.busUrl, 'session');
  gate = startRole(engine.busUrl, 'approval');
  await Promise.all([sessions.ready, gate.ready]);
  c = await testClient(engine.busUrl, 'approval-test');
});
afterAll(async () => {
  await c?.close();
  await gate?.stop();
  await sessions?.stop();
  await engine?.stop();
});

describe('the decision', () => {
  it('registers the approval-gate configuration entry with its defaults', async () => {
    expect((await call('configuration::get', { id: 'approval-gate' })).value).toEqual({
      default_mode: 'manual',
      rules: ['!approval::*', '!configuration::*'],
      pending_timeout_ms: 1_800_000,
    });
  });

  it('denies human-only functions in every mode, even full', async () => {
    await call('approval::set-mode', { session_id: 's-full', mode: 'full' });
    for (const fn of ['approval::resolve', 'approval::set-mode', 'configuration::set', 'configuration::reveal']) {
      const answer = await request('s-full', fn);
      expect(answer).toMatchObject({ decision: 'deny', outcome: 'deny', via: 'human_only_function' });
      expect(answer.reason).toContain(fn);
    }
    expect(await request('s-full', 'shell::exec')).toMatchObject({ decision: 'allow', via: 'mode_full' });
  });

  it('auto mode honours the trust list; a per-session grant holds in every mode', async () => {
    await call('approval::set-mode', { session_id: 's-auto', mode: 'auto' });
    const { settings } = await call('approval::add-always-allow', { session_id: 's-auto', function_id: 'fs::read*' });
    expect(settings).toMatchObject({ mode: 'auto', always_allow: [{ function_id: 'fs::read*', granted_by: 'user_click' }] });
    expect(await request('s-auto', 'fs::read_file')).toMatchObject({ decision: 'allow', via: 'always_allow' });
    // the trust list is dormant in manual mode
    await call('approval::set-mode', { session_id: 's-auto', mode: 'manual' });
    expect(await request('s-auto', 'fs::read_file', { wait: false })).toMatchObject({ decision: 'hold' });

    await call('approval::approve-always', { session_id: 's-auto', function_id: 'git::status' });
    expect(await request('s-auto', 'git::status')).toMatchObject({ decision: 'allow', via: 'approved_always' });
    await call('approval::remove-always-allow', { session_id: 's-auto', function_id: 'git::status' });
    expect(await request('s-auto', 'git::status', { wait: false })).toMatchObject({ decision: 'hold' });

    expect(await call('approval::get-settings', { session_id: 's-auto' })).toMatchObject({
      source: 'stored',
      settings: { mode: 'manual' },
    });
    expect(await call('approval::clear-settings', { session_id: 's-auto' })).toEqual({ cleared: true });
    expect(await call('approval::get-settings', { session_id: 's-auto' })).toEqual({
      source: 'defaults',
      settings: { mode: 'manual', mode_set_at: 0, always_allow: [], approved_always: [] },
    });
  });

  it('applies the rules of the configuration entry, first match wins, reloaded live', async () => {
    await call('configuration::set', {
      id: 'approval-gate',
      value: {
        default_mode: 'manual',
        rules: [
          '!approval::*',
          'state::get',
          '!shell::*',
          { function: 'fs::*', action: 'allow', modes: ['auto'] },
          { function: '*', action: 'ask' },
        ],
        pending_timeout_ms: 1_800_000,
      },
    });
    await waitFor(async () => (await request('s-rules', 'state::get')).decision === 'allow', 5000);
    const denied = await request('s-rules', 'shell::exec');
    expect(denied).toMatchObject({ decision: 'deny', via: 'rule' });
    expect(denied.reason).toContain('!shell::*');
    // a mode-scoped rule applies only in that mode
    expect(await request('s-rules', 'fs::write', { wait: false })).toMatchObject({ decision: 'hold' });
    await call('approval::set-mode', { session_id: 's-rules', mode: 'auto' });
    expect(await request('s-rules', 'fs::write')).toMatchObject({ decision: 'allow', via: 'rule' });
    // a bad rule set is refused by the entry's schema, naming the field
    const bad = await failure(call('configuration::set', { id: 'approval-gate', value: { rules: [{ function: 'x', action: 'maybe' }] } }));
    expect(bad.code).toBe('SCHEMA_INVALID');
    expect(bad.message).toContain('rules.0');
    await call('configuration::set', {
      id: 'approval-gate',
      value: { default_mode: 'manual', rules: ['!approval::*', '!configuration::*'], pending_timeout_ms: 1_800_000 },
    });
  });

  it('exports the policy the harness gives models: never approval::* or configuration::*', () => {
    expect(
      modelFunctionPolicy(['!approval::*', 'state::get', '!shell::*', { function: 'fs::*', action: 'deny', modes: ['auto'] }]),
    ).toEqual({
      allow: ['*'],
      deny: ['approval::*', 'configuration::*', 'shell::*'],
    });
    expect(modelFunctionPolicy(undefined).deny).toEqual(['approval::*', 'configuration::*', 'shell::workspace::*']);
  });
});

describe('held calls', () => {
  it('waits for a person; pending-created and pending-resolved fire exactly once per record', async () => {
    const { session_id } = await call('session::create', { title: 'Deploy', description: 'prod', metadata: { team: 'ops' } });
    const created = await recordEvents(c, 'approval::pending-created', { session_id });
    const resolved = await recordEvents(c, 'approval::pending-resolved', { metadata: { team: 'ops' } });
    const id = callId();
    const answer = call('approval::request', {
      session_id,
      turn_id: 'turn-9',
      call: { id, function_id: 'deploy::run', arguments: { service: 'api', api_key: 'sk-should-not-show' } },
      depth: 1,
    });
    await waitFor(() => created.events.length === 1, 5000);
    const record = created.events[0];
    expect(record).toEqual({
      function_call_id: id,
      function_id: 'deploy::run',
      session_id,
      turn_id: 'turn-9',
      arguments_excerpt: { service: 'api', api_key: '[redacted]' },
      depth: 1,
      pending_at: expect.any(Number),
      expires_at: record.pending_at + 1_800_000,
      session_title: 'Deploy',
      session_description: 'prod',
      session_metadata: { team: 'ops' },
      status: 'pending',
      call_digest: expect.any(String),
      runs: ['deploy::run'],
    });
    const { status: _s, ...stored } = record;
    expect(await call('approval::get-pending', { session_id, function_call_id: id })).toEqual({ pending: stored });
    expect((await call('approval::list-pending', { metadata: { team: 'ops' } })).pending).toEqual([stored]);
    // the same call asked again joins the record: no second event
    const args = { service: 'api', api_key: 'sk-should-not-show' };
    const again = call('approval::request', { session_id, turn_id: 'turn-9', call: { id, function_id: 'deploy::run', arguments: args } });
    // another call under the same id never joins the record's decision: it is refused at once
    const imposter = await call('approval::request', {
      session_id,
      turn_id: 'turn-9',
      call: { id, function_id: 'deploy::run', arguments: { service: 'db' } },
    });
    expect(imposter).toMatchObject({ decision: 'deny' });
    expect(imposter.reason).toContain('already held for another call');

    // two people decide at once: exactly one decision applies
    const decisions = await Promise.all([
      call('approval::resolve', { session_id, function_call_id: id, decision: 'allow' }),
      call('approval::resolve', { session_id, function_call_id: id, decision: 'deny', reason: 'late' }),
    ]);
    expect(decisions.filter((d) => d.resolved)).toHaveLength(1);
    const winner = decisions[0].resolved ? 'allow' : 'deny';
    expect((await answer).decision).toBe(winner);
    expect((await again).decision).toBe(winner);
    await waitFor(() => resolved.events.length >= 1, 5000);
    await sleep(300);
    expect(created.events).toHaveLength(1);
    expect(resolved.events).toEqual([
      {
        function_call_id: id,
        function_id: 'deploy::run',
        session_id,
        turn_id: 'turn-9',
        outcome: winner,
        ...(winner === 'deny' ? { reason: 'late' } : {}),
        session_metadata: { team: 'ops' },
        resolved_at: expect.any(Number),
      },
    ]);
    expect(await call('approval::get-pending', { session_id, function_call_id: id })).toBeNull();
    expect(await call('approval::resolve', { session_id, function_call_id: id, decision: 'allow' })).toEqual({ resolved: false });
    // a late repeat of the settled call gets its decision instead of a new hold
    expect(
      (await call('approval::request', { session_id, turn_id: 'turn-9', call: { id, function_id: 'deploy::run', arguments: args } }))
        .decision,
    ).toBe(winner);
    await sleep(200);
    expect(created.events).toHaveLength(1);
    // the id reused for another call (other arguments, or the same call in another turn) is a new
    // call: the settled decision does not carry over to it
    for (const reuse of [
      { turn_id: 'turn-9', call: { id, function_id: 'deploy::run', arguments: { service: 'db' } } },
      { turn_id: 'turn-10', call: { id, function_id: 'deploy::run', arguments: args } },
    ]) {
      expect(await call('approval::request', { session_id, ...reuse, wait: false })).toMatchObject({ decision: 'hold' });
      await call('approval::resolve', { session_id, function_call_id: id, decision: 'deny' });
    }
    created.unbind();
    resolved.unbind();
  });

  it('answers a deny with the reason the model sees; a session grant lets the next call through', async () => {
    const id = callId();
    const denied = call('approval::request', { session_id: 's-deny', turn_id: 't', function_call_id: id, function_id: 'db::drop' });
    await waitFor(async () => (await call('approval::get-pending', { session_id: 's-deny', function_call_id: id })) !== null, 5000);
    await call('approval::resolve', { session_id: 's-deny', function_call_id: id, decision: 'deny', reason: 'not on prod' });
    expect(await denied).toEqual({ decision: 'deny', outcome: 'deny', reason: 'denied: not on prod' });

    const id2 = callId();
    const allowed = call('approval::request', { session_id: 's-deny', turn_id: 't', function_call_id: id2, function_id: 'db::migrate' });
    await waitFor(async () => (await call('approval::get-pending', { session_id: 's-deny', function_call_id: id2 })) !== null, 5000);
    await call('approval::resolve', { session_id: 's-deny', function_call_id: id2, decision: 'allow', grant_scope: 'session' });
    expect(await allowed).toEqual({ decision: 'allow', outcome: 'allow' });
    expect(await request('s-deny', 'db::migrate')).toMatchObject({ decision: 'allow', via: 'approved_always' });
  });

  it('times out a call nobody decides on, once', async () => {
    const resolved = await recordEvents(c, 'approval::pending-resolved', { session_id: 's-timeout' });
    const defaults = (await call('configuration::get', { id: 'approval-gate' })).value;
    await call('configuration::set', { id: 'approval-gate', value: { ...defaults, pending_timeout_ms: 400 } });
    // the gate reloads the entry live: a held call now expires 400 ms after it was held
    await waitFor(async () => {
      const held = await request('s-timeout-probe', 'x::probe', { wait: false });
      return held.pending.expires_at - held.pending.pending_at === 400;
    }, 5000);
    const started = Date.now();
    const answer = await call('approval::request', {
      session_id: 's-timeout',
      turn_id: 't',
      function_call_id: callId(),
      function_id: 'x::y',
    });
    await call('configuration::set', { id: 'approval-gate', value: defaults });
    expect(answer).toMatchObject({ decision: 'deny', outcome: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await waitFor(() => resolved.events.length === 1, 5000);
    await sleep(200);
    expect(resolved.events).toHaveLength(1);
    expect(resolved.events[0]).toMatchObject({ outcome: 'timeout', session_id: 's-timeout' });
    resolved.unbind();
  });

  it('as the harness hook, answers hold and calls harness::function::resolve with the decision', async () => {
    const delivered: any[] = [];
    const fake = c.registerFunction('harness::function::resolve', (input: any) => {
      const { _caller_worker_id, ...rest } = input;
      delivered.push(rest);
      return { resolved: true, turn_resumed: true };
    });
    await call('engine::functions::list', {});
    const allowId = callId();
    const denyId = callId();
    const hook = (id: string) =>
      call('approval::gate', { session_id: 's-hook', turn_id: 'turn-h', call: { id, function_id: 'mail::send', arguments: {} } });
    expect(await hook(allowId)).toEqual({ decision: 'hold', pending_timeout_ms: 1_800_000 });
    expect(await hook(denyId)).toEqual({ decision: 'hold', pending_timeout_ms: 1_800_000 });
    expect(
      await call('approval::gate', { session_id: 's-hook', turn_id: 'turn-h', call: { id: callId(), function_id: 'approval::resolve' } }),
    ).toMatchObject({
      decision: 'deny',
    });
    expect(await call('approval::resolve', { session_id: 's-hook', function_call_id: allowId, decision: 'allow' })).toEqual({
      resolved: true,
      turn_resumed: true,
    });
    expect(
      await call('approval::resolve', { session_id: 's-hook', function_call_id: denyId, decision: 'deny', reason: 'no mail' }),
    ).toEqual({
      resolved: true,
      turn_resumed: true,
    });
    expect(delivered).toEqual([
      { session_id: 's-hook', turn_id: 'turn-h', function_call_id: allowId, action: 'execute' },
      {
        session_id: 's-hook',
        turn_id: 'turn-h',
        function_call_id: denyId,
        action: 'deliver',
        is_error: true,
        content: [{ type: 'text', text: 'mail::send was not run: denied: no mail' }],
        details: { kind: 'denied', outcome: 'deny', function_id: 'mail::send', reason: 'no mail' },
      },
    ]);
    fake.unregister();
  });

  it('aborts the held calls of a deleted session', async () => {
    const { session_id } = await call('session::create', {});
    const answer = request(session_id, 'slow::thing');
    await waitFor(async () => (await call('approval::list-pending', { session_id })).pending.length === 1, 5000);
    await call('session::delete', { session_id });
    expect(await answer).toMatchObject({ decision: 'deny', outcome: 'aborted' });
    expect((await call('approval::list-pending', { session_id })).pending).toEqual([]);
  });

  it('keeps held calls across a restart of the gate, pages the inbox and still resolves them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = callId();
      ids.push(id);
      await call('approval::gate', { session_id: 's-restart', turn_id: 't', call: { id, function_id: 'f::g' } });
    }
    await gate.stop();
    gate = startRole(engine.busUrl, 'approval');
    await gate.ready;
    // earlier tests left calls held too (wait: false); all of them are back
    expect(Number(/(\d+) pending calls?/.exec(gate.output())?.[1])).toBeGreaterThanOrEqual(5);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('approval::list-pending', { session_id: 's-restart', limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.pending.length).toBeLessThanOrEqual(2);
      seen.push(...page.pending.map((p: any) => p.function_call_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    for (const id of ids)
      expect((await call('approval::resolve', { session_id: 's-restart', function_call_id: id, decision: 'deny' })).resolved).toBe(true);
  });
});

describe('bad input', () => {
  it('names the field and keeps serving', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['approval::resolve', { session_id: 's', function_call_id: 'f', decision: 'maybe' }, /decision must be allow or deny/],
      ['approval::resolve', { function_call_id: 'f', decision: 'allow' }, /session_id is required/],
      ['approval::resolve', { session_id: 'a/b', function_call_id: 'f', decision: 'allow' }, /session_id must not contain "\/"/],
      ['approval::set-mode', { session_id: 's', mode: 'yolo' }, /mode must be one of manual, auto, full/],
      ['approval::request', { session_id: 's', turn_id: 't' }, /give call/],
      ['approval::request', { session_id: 's', call: { id: 'x', function_id: 'f' } }, /turn_id is required/],
      ['approval::gate', { session_id: 's', turn_id: 't', call: 'nope' }, /call must be an object/],
      ['approval::list-pending', { limit: -1 }, /limit must be at least 1/],
      ['approval::list-pending', { cursor: 'garbage' }, /cursor/],
      ['approval::add-always-allow', { session_id: 's' }, /function_id is required/],
    ];
    for (const [fn, payload, pattern] of cases) {
      const err = await failure(call(fn, payload));
      expect(err.message, `${fn} ${JSON.stringify(payload)}`).toMatch(pattern);
      expect(err.code).toMatch(/^approval\//);
    }
    expect(await request('s-alive', 'approval::resolve')).toMatchObject({ decision: 'deny' });
  });
});
