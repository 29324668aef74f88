import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as policy from '../../harness/src/approval/policy.ts';
import { resolveChain } from '../../harness/src/approval/targets.ts';
import {
  CONTROL_PLANE_FUNCTIONS,
  deniedToModels,
  denyRulesOf,
  fetchDeniedToModels,
  globMatch,
  HUMAN_ONLY_FUNCTIONS,
  NEVER_CALLABLE_BY_MODELS,
  OPAQUE_FUNCTIONS,
} from '../src/api/chat-gate.ts';
import { fetchMentionEntries } from '../src/api/functions-catalog.ts';

// issue 25 item 5: @-mentions offer only what the approval gate could allow. The web bundle mirrors
// the gate's fixed lists (api/chat-gate.ts); these tests fail when the mirror and the harness drift.

const noLookup = { subscribers: async () => [], triggerFunction: async () => undefined };

describe('the mirrored never-callable lists', () => {
  it('equal the harness policy lists', () => {
    expect([...HUMAN_ONLY_FUNCTIONS]).toEqual([...policy.HUMAN_ONLY_FUNCTIONS]);
    expect([...CONTROL_PLANE_FUNCTIONS]).toEqual([...policy.CONTROL_PLANE_FUNCTIONS]);
  });

  it("equal the gate's opaque functions (targets.ts OPAQUE and OPAQUE_PREFIXES), each refused by resolveChain", async () => {
    const source = readFileSync(new URL('../../harness/src/approval/targets.ts', import.meta.url), 'utf8');
    // the declarations, up to their closing `};` / `];`
    const block = (name: string) => {
      const start = source.indexOf(`const ${name}`);
      return start === -1 ? '' : source.slice(start, source.indexOf(';\n', start));
    };
    const ids = [...block('OPAQUE:').matchAll(/^\s+'([^']+)':/gm)].map((m) => m[1]);
    const prefixes = [...block('OPAQUE_PREFIXES').matchAll(/\['([^']+)',/g)].map((m) => `${m[1]}*`);
    expect(ids.length).toBeGreaterThan(0);
    expect(prefixes.length).toBeGreaterThan(0);
    expect([...OPAQUE_FUNCTIONS].sort()).toEqual([...ids, ...prefixes].sort());
    for (const glob of OPAQUE_FUNCTIONS) {
      const chain = await resolveChain(glob.replace('*', 'x'), {}, noLookup);
      expect(chain.refusal, glob).toBeDefined();
    }
  });

  it('globMatch and the deny rules read like the harness policy', () => {
    for (const [pattern, text] of [
      ['approval::*', 'approval::resolve'],
      ['a*c', 'abc'],
      ['a*c', 'abd'],
      ['engine::traces::clear', 'engine::traces::clear'],
      ['engine::traces::clear', 'engine::traces::list'],
    ] as const)
      expect(globMatch(pattern, text), `${pattern} ~ ${text}`).toBe(policy.globMatch(pattern, text));
    const rules: policy.Rule[] = [
      '!billing::*',
      'orders::*',
      { function: 'reports::*', action: 'deny' },
      { function: 'ops::*', action: 'deny', modes: ['manual'] },
      { function: 'x::*', action: 'ask' },
    ];
    const harnessDeny = policy
      .modelFunctionPolicy(rules)
      .deny.filter((f) => !(policy.HUMAN_ONLY_FUNCTIONS as readonly string[]).includes(f));
    expect(denyRulesOf(rules)).toEqual(harnessDeny);
  });
});

describe('the @-mention catalog', () => {
  const registered = [
    'orders::create',
    'orders::get',
    'approval::resolve',
    'configuration::get',
    'harness::send',
    'session::messages',
    'router::models::list',
    'provider::openai::generate',
    'context::compact',
    'engine::traces::clear',
    'engine::traces::list',
    'engine::logs::clear',
    'eng::queue::redrive',
    'iii::queue::redrive_message',
    'mcp::tools::call',
    'a2a::send',
    'engine::workers::register',
    'billing::refund',
    'reports::daily',
    'ops::restart',
  ];
  const engine =
    (rules: unknown, gateReadable = true) =>
    async <T>(functionId: string, payload: unknown): Promise<T> => {
      if (functionId === 'engine::functions::list')
        return { functions: registered.map((function_id) => ({ function_id, description: null })) } as T;
      if (functionId === 'configuration::get') {
        expect(payload).toEqual({ id: 'approval-gate' });
        if (!gateReadable) throw new Error('not found');
        return { value: { default_mode: 'manual', rules } } as T;
      }
      throw new Error(`unexpected ${functionId}`);
    };

  it('offers only functions the gate could allow: no human-only, control-plane, opaque or deny-ruled ones', async () => {
    const rules = ['!billing::*', { function: 'reports::*', action: 'deny' }, { function: 'ops::*', action: 'deny', modes: ['manual'] }];
    const offered = (await fetchMentionEntries(engine(rules))).map((e) => e.function_id);
    expect(offered).toEqual(['orders::create', 'orders::get', 'engine::traces::list', 'ops::restart']);
  });

  it('keeps the fixed lists when the approval-gate entry cannot be read', async () => {
    const denied = await fetchDeniedToModels(engine(undefined, false));
    expect(denied).toEqual(NEVER_CALLABLE_BY_MODELS);
    expect(deniedToModels('billing::refund', denied)).toBe(false);
    expect(deniedToModels('approval::list-pending', denied)).toBe(true);
  });
});
