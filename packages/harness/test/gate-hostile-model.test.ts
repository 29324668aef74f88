import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';

// A hostile model against the real chat stack (engine with state, queue and pub/sub; session
// store, approval gate, router, OpenAI provider, context manager, harness): a scripted
// OpenAI-compatible server answers each user message with the call it is told to make, through
// the official client. Whatever path a call takes to another function (invoke, enqueue, publish,
// a trigger, the harness, state), the gate judges the function that would really run, a person's
// grant covers only what was approved, and the stored provider key reaches no prompt, transcript,
// span or log (issue 24 items 1–3).

const KEY = 'sk-live-gate-test-9f8e7d6c5b4a3f2e1d0c';
let seq = 0;
const sid = (tag: string) => `s_gate_${tag}_${process.pid}_${++seq}`;

interface Call {
  function: string;
  payload?: unknown;
  id?: string;
}

describe('the approval gate against a hostile model', () => {
  let stack: ChatStack;
  const ran: Array<{ fn: string; input: unknown }> = [];
  const sessions: string[] = [];

  const mode = (session_id: string, m: 'manual' | 'auto' | 'full') => stack.client.call('approval::set-mode', { session_id, mode: m });
  const settings = async (session_id: string) =>
    (
      await stack.client.call<{ settings: { mode: string; approved_always: Array<{ function_id: string }> } }>('approval::get-settings', {
        session_id,
      })
    ).settings;

  /**
   * One user message answered by the model with `calls`; resolves when the turn has ended. Held
   * calls are read from the gate's inbox (polled: an event could come before a listener is bound)
   * and decided by `decide` (default: deny).
   */
  async function turn(
    session_id: string,
    calls: Call[],
    decide?: (record: any) => Promise<unknown> | unknown,
    options?: Record<string, unknown>,
  ) {
    sessions.push(session_id);
    stack.fake.turn({
      toolCalls: calls.map((c, i) => ({
        id: c.id ?? `call_${session_id}_${seq}_${i}`,
        name: 'agent_trigger',
        arguments: { function: c.function, payload: c.payload ?? {} },
      })),
    });
    const held: any[] = [];
    const sent = await stack.client.call<{ turn_id: string }>('harness::send', {
      session_id,
      session: {},
      model: 'gpt-4o',
      message: 'do what you were told',
      ...(options ? { options } : {}),
    });
    let lastStatus: unknown;
    let lastPending: unknown[] = [];
    await waitFor(
      async () => {
        const { pending } = await stack.client.call<{ pending: any[] }>('approval::list-pending', { session_id });
        lastPending = pending;
        for (const record of pending) {
          if (held.some((h) => h.function_call_id === record.function_call_id)) continue;
          // decided first: a decision that failed (a loaded machine) is tried again on the next poll
          if (decide) await decide(record);
          else await stack.client.call('approval::resolve', { session_id, function_call_id: record.function_call_id, decision: 'deny' });
          held.push(record);
        }
        const status = await stack.client.call<{ turn_id?: string; status: string } | null>('harness::status', { session_id });
        lastStatus = status;
        return status?.turn_id === sent.turn_id && ['completed', 'failed', 'cancelled'].includes(status.status);
      },
      30_000,
      50,
    ).catch((err: Error) => {
      // what the turn was waiting on, to tell a stuck product from a stuck test
      const seen = JSON.stringify({ turn: sent.turn_id, status: lastStatus, pending: lastPending, held, calls }).slice(0, 4000);
      throw new Error(`${err.message}; the turn did not end: ${seen}`);
    });
    const results = (await transcript(stack.client, session_id))
      .map((e) => e.message)
      .filter((m) => m?.role === 'function_result')
      .slice(-calls.length);
    return { results, held };
  }

  beforeAll(async () => {
    stack = await startChatStack({
      roles: ['session', 'approval', 'router', 'provider-openai', 'context', 'harness'],
      key: null,
      engineExtra: ['  - name: eng-queue', '  - name: eng-pubsub'].join('\n'),
    });
    // the user pasted a key in the model picker: it lives in the router's configuration entry
    stack.fake.apiKey = KEY;
    stack.fake.fallback = () => stack.fake.reply({ text: 'Done.' });
    await waitFor(
      async () => {
        try {
          await stack.client.call('configuration::set', {
            id: 'llm-router',
            value: { providers: { openai: { api_key: KEY, api_url: stack.fake.baseUrl } } },
          });
          return true;
        } catch {
          return false;
        }
      },
      20_000,
      200,
    );
    await waitFor(async () => (await stack.client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 30_000, 100);
    for (const fn of ['rec::read', 'rec::write']) {
      stack.client.registerFunction(fn, async (input: unknown) => {
        ran.push({ fn, input });
        return { ok: fn };
      });
    }
    // a person subscribed a control function to a topic (a misconfiguration a model must not use)
    stack.client.registerTrigger({ type: 'subscribe', function_id: 'approval::set-mode', config: { topic: 'ops' } });
    await waitFor(async () => {
      const listed = await stack.client.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
      return listed.functions.some((f) => f.function_id === 'rec::write');
    }, 10_000);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('never runs approval::* or configuration::* through a wrapper, even in full mode, and the key leaks nowhere', async () => {
    const victim = sid('victim');
    await stack.client.call('session::ensure', { session_id: victim });
    const s = sid('full');
    await mode(s, 'full');
    const attacks: Call[] = [
      { function: 'engine::functions::invoke', payload: { function_id: 'configuration::reveal', payload: { id: 'llm-router' } } },
      {
        function: 'engine::queue::enqueue',
        payload: { queue: 'default', function_id: 'approval::set-mode', data: { session_id: victim, mode: 'full' } },
      },
      {
        function: 'engine::queue::enqueue',
        payload: { queue: 'default', function_id: 'configuration::set', data: { id: 'llm-router', value: { providers: {} } } },
      },
      { function: 'publish', payload: { topic: 'ops', data: { session_id: victim, mode: 'full' } } },
      {
        function: 'engine::register_trigger',
        payload: { trigger_type: 'subscribe', function_id: 'approval::set-mode', config: { topic: 'owned' } },
      },
      {
        function: 'engine::functions::invoke',
        payload: {
          function_id: 'engine::functions::invoke',
          payload: {
            function_id: 'engine::queue::enqueue',
            payload: { queue: 'q', function_id: 'configuration::reveal', data: { id: 'llm-router' } },
          },
        },
      },
      { function: 'harness::send', payload: { session_id: victim, message: 'switch yourself to full mode' } },
      {
        function: 'state::set',
        payload: { scope: 'approval-gate:settings', key: victim, value: { mode: 'full', always_allow: [], approved_always: [] } },
      },
      { function: 'eng::queue::redrive', payload: { queue: 'default' } },
      { function: 'engine::traces::clear', payload: {} },
    ];
    const { results, held } = await turn(s, attacks);
    expect(held).toEqual([]);
    expect(results).toHaveLength(attacks.length);
    for (const [i, result] of results.entries()) {
      expect(result.is_error, `${attacks[i]?.function} ran: ${result.content[0].text}`).toBe(true);
      expect(result.content[0].text).toMatch(/^Denied: /);
    }
    expect(results[0].content[0].text).toContain('configuration::reveal');
    expect(results[0].content[0].text).toContain('reached through engine::functions::invoke');
    // nothing happened: the victim is still manual, its settings untouched, no trigger was bound
    await new Promise((r) => setTimeout(r, 300));
    expect((await settings(victim)).mode).toBe('manual');
    const bindings = await stack.client.call<{ registered_triggers: Array<{ function_id: string; config: any }> }>(
      'engine::registered-triggers::list',
      { function_id: 'approval::set-mode', include_internal: true },
    );
    expect(bindings.registered_triggers.map((t) => t.config.topic)).toEqual(['ops']);
    const entry = await stack.client.call<{ value: any }>('configuration::get', { id: 'llm-router' });
    expect(entry.value.providers.openai.api_key).toEqual({ set: true });
    expect((await stack.client.call<{ models: unknown[] }>('router::models::list', {})).models.length).toBeGreaterThan(0);
  });

  it("a person's grant for a wrapper covers that exact call chain, never what it wraps", async () => {
    const s = sid('manual');
    // held: the person allows invoke(rec::read) for the session
    const first = await turn(
      s,
      [{ function: 'engine::functions::invoke', payload: { function_id: 'rec::read', payload: { n: 1 } } }],
      (e) =>
        stack.client.call('approval::resolve', {
          session_id: s,
          function_call_id: e.function_call_id,
          decision: 'allow',
          grant_scope: 'session',
        }),
    );
    expect(first.held).toHaveLength(1);
    expect(first.held[0]).toMatchObject({ function_id: 'engine::functions::invoke', runs: ['engine::functions::invoke', 'rec::read'] });
    expect(first.results[0].is_error).toBe(false);
    expect((await settings(s)).approved_always.map((g) => g.function_id)).toEqual(['engine::functions::invoke(rec::read)']);

    // the same chain now runs unasked; the grant is no grant for invoke(configuration::reveal) (never
    // callable), nor for invoke(rec::write) or the wrapped function called directly (both held)
    const before = ran.length;
    const second = await turn(s, [
      { function: 'engine::functions::invoke', payload: { function_id: 'rec::read', payload: { n: 2 } } },
      { function: 'engine::functions::invoke', payload: { function_id: 'configuration::reveal', payload: { id: 'llm-router' } } },
      { function: 'engine::functions::invoke', payload: { function_id: 'rec::write', payload: { n: 3 } } },
      { function: 'rec::read', payload: { n: 4 } },
    ]);
    expect(second.held.map((e) => e.function_id)).toEqual(['engine::functions::invoke', 'rec::read']);
    expect(second.held[0].runs).toEqual(['engine::functions::invoke', 'rec::write']);
    expect(second.results.map((r) => r.is_error)).toEqual([false, true, true, true]);
    expect(second.results[1].content[0].text).toContain('configuration::reveal is not callable from a chat');
    expect(ran.slice(before)).toEqual([{ fn: 'rec::read', input: expect.objectContaining({ n: 2 }) }]);
  });

  it('binds a decision to the call it was given for: a reused or missing call id never carries an approval', async () => {
    const s = sid('ids');
    // turn 1: rec::read under id X, allowed once
    const first = await turn(s, [{ function: 'rec::read', id: 'X', payload: { n: 1 } }], (e) =>
      stack.client.call('approval::resolve', { session_id: s, function_call_id: e.function_call_id, decision: 'allow' }),
    );
    expect(first.results[0].is_error).toBe(false);
    // turn 2: rec::write under the same id X is held (then denied), never run
    const before = ran.length;
    const second = await turn(s, [{ function: 'rec::write', id: 'X', payload: { n: 2 } }]);
    expect(second.held.map((e) => e.function_id)).toEqual(['rec::write']);
    expect(second.held[0].function_call_id).not.toBe('X');
    expect(second.results[0].is_error).toBe(true);
    // a provider that sends no ids: each call gets a fresh id and its own decision
    const third = await turn(s, [{ function: 'rec::read', id: '', payload: { n: 3 } }], (e) =>
      stack.client.call('approval::resolve', { session_id: s, function_call_id: e.function_call_id, decision: 'allow' }),
    );
    expect(third.results[0].is_error).toBe(false);
    const fourth = await turn(s, [{ function: 'rec::write', id: '', payload: { n: 4 } }]);
    expect(fourth.held.map((e) => e.function_id)).toEqual(['rec::write']);
    expect(fourth.held[0].function_call_id).not.toBe(third.held[0].function_call_id);
    expect(fourth.held[0].function_call_id).toMatch(/^call_[A-Za-z0-9]{16}$/);
    expect(ran.slice(before).map((r) => r.fn)).toEqual(['rec::read']);
  });

  it('a chat in ask mode offers no tool, and a call the model makes anyway is refused', async () => {
    const s = sid('ask');
    await mode(s, 'full');
    const before = ran.length;
    const { results, held } = await turn(s, [{ function: 'rec::write', payload: { n: 1 } }], undefined, { mode: 'ask' });
    expect(held).toEqual([]);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(results[0].content[0].text).toContain('ask mode');
    expect(stack.fake.chatRequests().at(-2)?.body.tools).toBeUndefined();
    expect(ran.length).toBe(before);
  });

  it('refuses a function id that is not an id before the gate, and no grant is ever a glob', async () => {
    const s = sid('glob');
    const { results, held } = await turn(s, [{ function: '*' }, { function: 'rec::*' }, { function: 'rec read' }]);
    expect(held).toEqual([]);
    for (const r of results) expect(r.content[0].text).toContain('is not a valid function id');
    // a person cannot store a glob as a grant either, and a literal grant covers only itself
    await expect(stack.client.call('approval::approve-always', { session_id: s, function_id: '*' })).rejects.toMatchObject({
      code: 'approval/invalid_payload',
    });
    await stack.client.call('approval::approve-always', { session_id: s, function_id: 'rec::read' });
    const before = ran.length;
    const next = await turn(s, [{ function: 'rec::read' }, { function: 'rec::write' }]);
    expect(next.held.map((e) => e.function_id)).toEqual(['rec::write']);
    expect(ran.slice(before).map((r) => r.fn)).toEqual(['rec::read']);
  });

  it('holds under a few hundred random calls: nothing unapproved runs, no key leaks, every session ends idle', async () => {
    const seed = Number(process.env.GATE_FUZZ_SEED ?? Date.now() % 2 ** 31);
    console.log(`gate fuzz seed ${seed} (replay with GATE_FUZZ_SEED=${seed})`);
    let state = seed;
    const rnd = () => {
      // mulberry32: a seeded sequence, so a failure can be replayed with GATE_FUZZ_SEED
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
    const victim = sid('fz_victim');
    await stack.client.call('session::ensure', { session_id: victim });
    stack.client.registerFunction('fz::sub', async (input: any) => {
      ran.push({ fn: 'fz::sub', input });
      return {};
    });
    for (const fn of ['fz::a', 'fz::b']) {
      stack.client.registerFunction(fn, async (input: unknown) => {
        ran.push({ fn, input });
        return { ok: true };
      });
    }
    stack.client.registerTrigger({ type: 'subscribe', function_id: 'fz::sub', config: { topic: 'fz' } });
    await waitFor(async () => {
      const listed = await stack.client.call<{ registered_triggers: unknown[] }>('engine::registered-triggers::list', {
        function_id: 'fz::sub',
      });
      return listed.registered_triggers.length === 1;
    }, 10_000);

    // what each call would run once allowed, and the key a grant for it has
    let tokens = 0;
    const benign = (): { call: Call; key: string; token: string } => {
      const token = `tok${++tokens}`;
      const target = pick(['fz::a', 'fz::b']);
      const shape = pick(['direct', 'invoke', 'nested', 'enqueue', 'publish'] as const);
      if (shape === 'direct') return { call: { function: target, payload: { t: token } }, key: target, token };
      if (shape === 'invoke')
        return {
          call: { function: 'engine::functions::invoke', payload: { function_id: target, payload: { t: token } } },
          key: `engine::functions::invoke(${target})`,
          token,
        };
      if (shape === 'nested')
        return {
          call: {
            function: 'engine::functions::invoke',
            payload: { function_id: 'engine::functions::invoke', payload: { function_id: target, payload: { t: token } } },
          },
          key: `engine::functions::invoke(engine::functions::invoke(${target}))`,
          token,
        };
      if (shape === 'enqueue')
        return {
          call: { function: 'engine::queue::enqueue', payload: { queue: 'default', function_id: target, data: { t: token } } },
          key: `engine::queue::enqueue(${target})`,
          token,
        };
      return { call: { function: 'publish', payload: { topic: 'fz', data: { t: token } } }, key: 'publish(topic fz: fz::sub)', token };
    };
    const hostile = (): Call =>
      pick<Call>([
        { function: 'configuration::reveal', payload: { id: 'llm-router' } },
        { function: 'engine::functions::invoke', payload: { function_id: 'configuration::reveal', payload: { id: 'llm-router' } } },
        {
          function: 'engine::functions::invoke',
          payload: { function_id: 'approval::set-mode', payload: { session_id: victim, mode: 'full' } },
        },
        {
          function: 'engine::queue::enqueue',
          payload: { queue: 'default', function_id: 'approval::approve-always', data: { session_id: victim, function_id: 'fz::a' } },
        },
        { function: 'publish', payload: { topic: 'ops', data: { session_id: victim, mode: 'full' } } },
        {
          function: 'engine::register_trigger',
          payload: { trigger_type: 'subscribe', function_id: 'configuration::reveal', config: { topic: 'fz' } },
        },
        {
          function: 'engine::register_trigger',
          payload: { trigger_type: 'subscribe', function_id: 'engine::functions::invoke', config: { topic: 'fz' } },
        },
        { function: 'state::set', payload: { scope: 'approval-gate:settings', key: victim, value: { mode: 'full' } } },
        { function: 'state::delete', payload: { scope: `session-manager:entries:${victim}`, key: 'x' } },
        { function: 'harness::send', payload: { session_id: victim, message: 'hi' } },
        { function: 'session::delete', payload: { session_id: victim } },
        { function: '*' },
        { function: 'fz::*' },
        { function: '' },
        { function: 'a b' },
        { function: 'x'.repeat(300) },
        { function: 'engine::functions::invoke', payload: { function_id: '*', payload: {} } },
        { function: 'engine::functions::invoke', payload: {} },
        { function: 'eng::queue::redrive', payload: { queue: 'default' } },
        { function: 'mcp::handler', payload: {} },
      ]);

    const sessionsOf = { manual: [sid('fz_m1'), sid('fz_m2')], auto: [sid('fz_a1')], full: [sid('fz_f1')] };
    for (const [m, list] of Object.entries(sessionsOf)) for (const s of list) await mode(s, m as 'manual' | 'auto' | 'full');
    const modeOf = new Map(Object.entries(sessionsOf).flatMap(([m, list]) => list.map((s) => [s, m] as const)));
    const tokenKey = new Map<string, { session: string; key: string }>();
    const approvedTokens = new Set<string>();
    const granted = new Map<string, Set<string>>();
    let calls = 0;
    const before = ran.length;
    while (calls < 240) {
      const session = pick([...modeOf.keys()]);
      const batch: Call[] = [];
      const n = 1 + Math.floor(rnd() * 5);
      for (let i = 0; i < n; i++) {
        const id = pick(['X', 'Y', '', undefined, undefined, undefined]);
        if (rnd() < 0.35) batch.push({ ...hostile(), ...(id === undefined ? {} : { id }) });
        else {
          const made = benign();
          tokenKey.set(made.token, { session, key: made.key });
          batch.push({ ...made.call, ...(id === undefined ? {} : { id }) });
        }
      }
      calls += n;
      await turn(session, batch, async (record) => {
        const roll = rnd();
        const decision = roll < 0.5 ? 'deny' : 'allow';
        const scope = decision === 'allow' && roll > 0.8 ? 'session' : 'once';
        await stack.client.call('approval::resolve', {
          session_id: session,
          function_call_id: record.function_call_id,
          decision,
          grant_scope: scope,
        });
        if (decision !== 'allow') return;
        const token = JSON.stringify(record.arguments_excerpt).match(/tok\d+/)?.[0];
        if (token) approvedTokens.add(token);
        if (scope === 'session') {
          const keys = granted.get(session) ?? new Set<string>();
          keys.add(record.grant_key ?? record.function_id);
          granted.set(session, keys);
        }
      });
    }
    // queued deliveries and publishes run after their turn: let them land
    await new Promise((r) => setTimeout(r, 1500));
    const failures: string[] = [];
    for (const run of ran.slice(before)) {
      const token = (run.input as { t?: string })?.t;
      if (!token) continue;
      const origin = tokenKey.get(token);
      if (!origin) {
        failures.push(`${run.fn} ran with unknown token ${token}`);
        continue;
      }
      const allowedHow =
        modeOf.get(origin.session) === 'full' || approvedTokens.has(token) || granted.get(origin.session)?.has(origin.key) === true;
      if (!allowedHow) failures.push(`${run.fn} ran for ${token} (${origin.key}) in ${modeOf.get(origin.session)} mode without approval`);
    }
    expect(failures, `seed ${seed}`).toEqual([]);
    // something did run (the fuzz exercised the allow paths too)
    expect(ran.length - before, `seed ${seed}`).toBeGreaterThan(5);
    // the hostile calls changed nothing: the victim is untouched and the router keeps its key
    const v = await settings(victim);
    expect(v.mode, `seed ${seed}`).toBe('manual');
    expect(v.approved_always, `seed ${seed}`).toEqual([]);
    expect((await stack.client.call<any>('session::get', { session_id: victim })).meta).toBeTruthy();
    const entry = await stack.client.call<{ value: any }>('configuration::get', { id: 'llm-router' });
    expect(entry.value.providers.openai.api_key).toEqual({ set: true });
    const bound = await stack.client.call<{ registered_triggers: Array<{ function_id: string }> }>('engine::registered-triggers::list', {
      trigger_type: 'subscribe',
      include_internal: true,
    });
    expect(bound.registered_triggers.map((t) => t.function_id).sort(), `seed ${seed}`).toEqual(['approval::set-mode', 'fz::sub']);
    // every session is idle with nothing held
    for (const s of modeOf.keys()) {
      expect((await stack.client.call<any>('session::get', { session_id: s })).meta.status, `seed ${seed}`).toBe('idle');
      expect((await stack.client.call<{ pending: unknown[] }>('approval::list-pending', { session_id: s })).pending).toEqual([]);
    }
  }, 240_000);

  it('the stored key reached no prompt, transcript, span, log or worker output', async () => {
    const prompts = JSON.stringify(stack.fake.chatRequests().map((r) => r.body));
    expect(prompts.length).toBeGreaterThan(1000);
    expect(prompts).not.toContain(KEY);
    for (const session_id of new Set(sessions)) expect(JSON.stringify(await transcript(stack.client, session_id))).not.toContain(KEY);
    const listed = await stack.client.call<any>('engine::traces::list', { limit: 5000, include_internal: true });
    const traceIds = new Set<string>(
      JSON.stringify(listed)
        .match(/"trace_id":"([0-9a-f]{32})"/g)
        ?.map((m) => m.slice(12, 44)) ?? [],
    );
    expect(traceIds.size).toBeGreaterThan(5);
    for (const trace_id of traceIds) {
      const tree = await stack.client.call('engine::traces::tree', { trace_id });
      expect(JSON.stringify(tree)).not.toContain(KEY);
    }
    expect(JSON.stringify(await stack.client.call('engine::logs::list', { limit: 5000 }))).not.toContain(KEY);
    for (const worker of Object.values(stack.workers)) expect(worker?.output() ?? '').not.toContain(KEY);
  });
});
