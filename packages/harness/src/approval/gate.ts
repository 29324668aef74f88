import { createHash } from 'node:crypto';
import { type EngClient, EngError, ErrorCode } from '@eng/sdk';
import { z } from 'zod';
import { domainError } from '../shared/errors.ts';
import { metadataMatches } from '../shared/event-types.ts';
import { registerHandler } from '../shared/functions.ts';
import type { GateSettings } from './config.ts';
import { excerptOf, type Outcome, type PendingInbox, type PendingRecord, type Resolution } from './pending.ts';
import { isControlPlane, isHumanOnly, matchRule } from './policy.ts';
import { granted, listed, plainId, type SettingsStore } from './settings.ts';
import { type CallChain, resolveChain, type TargetLookup } from './targets.ts';

// spec: console-worker.md §2.7 — the decision. Order (the reference's): human-only functions are
// denied (even in full mode); full mode allows; a per-session grant allows in every mode; in auto
// mode the session's trust list allows; then the entry's rules, first match wins; no match holds.

export interface GateContext {
  client: EngClient;
  /** How the gate finds what a wrapper call would run (topic subscribers, trigger bindings). */
  lookup: TargetLookup;
  settings: SettingsStore;
  inbox: PendingInbox;
  gate(): GateSettings;
}

export type Decision = { decision: 'allow'; via: string } | { decision: 'deny'; reason: string; via: string } | { decision: 'hold' };

/**
 * The decision for a call, judged on everything it would run (`resolveChain`): a function only a
 * person may call, or one of the chat stack's control plane, anywhere in the chain denies it in
 * every mode; a chain the gate cannot see through is denied; a remembered grant covers exactly the
 * chain it was given for; the trust list and the rules must allow every function in the chain.
 */
export async function decide(ctx: GateContext, sessionId: string, chain: CallChain): Promise<Decision> {
  const named = chain.functions[0];
  const through = (fn: string) => (fn === named || !named ? '' : ` (reached through ${named})`);
  for (const fn of chain.functions) {
    if (isHumanOnly(fn))
      return {
        decision: 'deny',
        reason: `${fn} may only be called by a person, never by a model (human_only_function)${through(fn)}`,
        via: 'human_only_function',
      };
    if (isControlPlane(fn))
      return {
        decision: 'deny',
        reason: `${fn} belongs to the chat stack's control plane and is never a model's tool (control_plane)${through(fn)}`,
        via: 'control_plane',
      };
  }
  if (chain.refusal) return { decision: 'deny', reason: chain.refusal, via: 'unresolvable_call' };
  const { settings } = await ctx.settings.effective(sessionId);
  if (settings.mode === 'full') return { decision: 'allow', via: 'mode_full' };
  if (granted(settings.approved_always, chain.key)) return { decision: 'allow', via: 'approved_always' };
  if (settings.mode === 'auto' && chain.functions.every((fn) => listed(settings.always_allow, fn)))
    return { decision: 'allow', via: 'always_allow' };
  let allowed = true;
  for (const fn of chain.functions) {
    const match = matchRule(ctx.gate().rules, fn, settings.mode);
    if (match?.action === 'deny')
      return {
        decision: 'deny',
        reason: `${fn} is denied by the approval-gate rule ${JSON.stringify(match.rule)}${through(fn)}`,
        via: 'rule',
      };
    if (match?.action !== 'allow') allowed = false;
  }
  return allowed ? { decision: 'allow', via: 'rule' } : { decision: 'hold' };
}

/** A digest of one call: its turn, function and arguments. Decisions are bound to it. */
export function callDigest(turnId: string, functionId: string, args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([turnId, functionId, canonical(args ?? null)]))
    .digest('base64url');
}

/** The value with object keys sorted, so equal arguments digest equally however they were written. */
function canonical(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => canonical(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key], depth + 1);
  return out;
}

const CallInput = z
  .object({
    session_id: plainId('session_id'),
    turn_id: z
      .string({ error: (i) => (i.input === undefined ? 'turn_id is required' : 'turn_id must be a string') })
      .min(1, { error: 'turn_id must not be empty' }),
    call: z
      .object(
        {
          id: plainId('call.id'),
          function_id: z.string({ error: 'call.function_id must be a string' }).min(1),
          arguments: z.unknown().optional(),
        },
        { error: 'call must be an object {id, function_id, arguments}' },
      )
      .nullish(),
    function_call_id: plainId('function_call_id').optional(),
    function_id: z.string({ error: 'function_id must be a string' }).min(1, { error: 'function_id must not be empty' }).optional(),
    arguments: z.unknown().optional(),
    depth: z.number({ error: 'depth must be a number' }).int().min(0).nullish(),
    metadata: z.record(z.string(), z.unknown(), { error: 'metadata must be an object' }).nullish(),
    assistant_excerpt: z.string({ error: 'assistant_excerpt must be a string' }).nullish(),
    timeout_ms: z.number({ error: 'timeout_ms must be a number' }).int().min(100, { error: 'timeout_ms must be at least 100' }).nullish(),
    wait: z.boolean({ error: 'wait must be a boolean' }).nullish(),
  })
  .refine((i) => i.call || (i.function_call_id && i.function_id), {
    error: 'give call {id, function_id, arguments}, or function_call_id and function_id',
    path: ['call'],
  });
type CallInput = z.infer<typeof CallInput>;

const ResolveInput = z.object({
  session_id: plainId('session_id'),
  function_call_id: plainId('function_call_id'),
  decision: z.enum(['allow', 'deny'], { error: 'decision must be allow or deny' }),
  reason: z.string({ error: 'reason must be a string' }).max(10_000, { error: 'reason is too long' }).nullish(),
  grant_scope: z.enum(['once', 'session', 'always'], { error: 'grant_scope must be once, session or always' }).nullish(),
  access_duration: z.enum(['once', 'session', 'always'], { error: 'access_duration must be once, session or always' }).nullish(),
});
const ListInput = z.object({
  session_id: plainId('session_id').nullish(),
  metadata: z.record(z.string(), z.unknown(), { error: 'metadata must be an object' }).nullish(),
  limit: z.number({ error: 'limit must be a number' }).int().min(1, { error: 'limit must be at least 1' }).nullish(),
  cursor: z.string({ error: 'cursor must be a string' }).nullish(),
});
const GetInput = z.object({ session_id: plainId('session_id'), function_call_id: plainId('function_call_id') });

/** What the call would run, with the engine's introspection as the lookup. */
function chainOf(ctx: GateContext, input: CallInput): Promise<CallChain> {
  return resolveChain(input.call?.function_id ?? input.function_id, input.call ? input.call.arguments : input.arguments, ctx.lookup);
}

/** The session's title, description and metadata for the inbox (best effort: the session store may be absent). */
async function sessionContext(client: EngClient, sessionId: string): Promise<Partial<PendingRecord>> {
  try {
    const found = await client.call<{ meta?: { title?: string; description?: string; metadata?: Record<string, unknown> } } | null>(
      'session::get',
      { session_id: sessionId },
      { timeoutMs: 2000 },
    );
    const meta = found?.meta;
    if (!meta) return {};
    return {
      ...(meta.title ? { session_title: meta.title } : {}),
      ...(meta.description ? { session_description: meta.description } : {}),
      ...(meta.metadata ? { session_metadata: meta.metadata } : {}),
    };
  } catch {
    return {};
  }
}

/** Hold the call (or join its record); a call settled a moment ago answers with that resolution. */
async function holdCall(
  ctx: GateContext,
  input: CallInput,
  chain: CallChain,
  delivery: 'wait' | 'hook',
): Promise<{ record: PendingRecord } | { settled: Resolution }> {
  const functionCallId = (input.call?.id ?? input.function_call_id) as string;
  const functionId = (input.call?.function_id ?? input.function_id) as string;
  const args = input.call ? input.call.arguments : input.arguments;
  const digest = callDigest(input.turn_id, functionId, args);
  const settled = ctx.inbox.settledOf(input.session_id, functionCallId, digest);
  if (settled) return { settled };
  const existing = ctx.inbox.get(input.session_id, functionCallId);
  if (existing) {
    if (existing.call_digest === undefined || existing.call_digest === digest) return { record: existing };
    // another call waits under this id: the second one is refused, never joined to its decision
    return {
      settled: {
        outcome: 'deny',
        reason: `the call id ${functionCallId} is already held for another call (${existing.function_id})`,
        resolved_at: Date.now(),
      },
    };
  }
  const now = Date.now();
  const timeout = input.timeout_ms ?? ctx.gate().pending_timeout_ms;
  const record: PendingRecord = {
    function_call_id: functionCallId,
    function_id: functionId,
    session_id: input.session_id,
    turn_id: input.turn_id,
    arguments_excerpt: excerptOf(args),
    call_digest: digest,
    ...(chain.key !== functionId ? { grant_key: chain.key } : {}),
    runs: chain.functions,
    ...(input.assistant_excerpt ? { assistant_excerpt: input.assistant_excerpt } : {}),
    depth: input.depth ?? 0,
    pending_at: now,
    expires_at: now + timeout,
    ...(await sessionContext(ctx.client, input.session_id)),
  };
  try {
    return await ctx.inbox.hold(record, delivery);
  } catch (err) {
    throw domainError('approval', 'state_unavailable', `storing the pending record failed: ${(err as Error).message}`);
  }
}

/** The answer of approval::request for a settled call. */
function answerOf(resolution: Resolution) {
  return {
    decision: resolution.outcome === 'allow' ? 'allow' : 'deny',
    outcome: resolution.outcome,
    ...(resolution.outcome !== 'allow' ? { reason: denialText(resolution.outcome, resolution.reason) } : {}),
  };
}

/** What the harness hears once a hook-held call is decided (§2.7: deliver an error on deny, execute on allow). */
export async function callHarnessBack(
  client: EngClient,
  record: PendingRecord,
  outcome: Outcome,
  reason?: string,
): Promise<{ turn_resumed?: boolean | null }> {
  const ids = { session_id: record.session_id, turn_id: record.turn_id, function_call_id: record.function_call_id };
  const payload =
    outcome === 'allow'
      ? { ...ids, action: 'execute' }
      : {
          ...ids,
          action: 'deliver',
          is_error: true,
          content: [{ type: 'text', text: `${record.function_id} was not run: ${denialText(outcome, reason)}` }],
          details: { kind: 'denied', outcome, function_id: record.function_id, ...(reason ? { reason } : {}) },
        };
  try {
    const result = await client.call<{ turn_resumed?: boolean } | null>('harness::function::resolve', payload, { timeoutMs: 10_000 });
    return { turn_resumed: result?.turn_resumed ?? null };
  } catch (err) {
    if (EngError.from(err).code === ErrorCode.FunctionNotFound) return { turn_resumed: null };
    throw err;
  }
}

function denialText(outcome: Outcome, reason?: string): string {
  if (outcome === 'timeout') return reason ?? 'the approval timed out';
  if (outcome === 'aborted') return reason ?? 'the turn was aborted';
  return reason ? `denied: ${reason}` : 'denied by a person';
}

export function registerGateFunctions(ctx: GateContext): void {
  const fn = <T>(
    id: string,
    description: string,
    schema: z.ZodType<T>,
    handler: (input: T) => unknown,
    metadata?: Record<string, unknown>,
  ) => registerHandler(ctx.client, 'approval', id, { description, schema, metadata, invalidCode: 'invalid_payload' }, handler);

  fn(
    'approval::request',
    'Ask whether a model may run a function call: answers {decision: allow|deny, outcome, reason?}, after waiting for a person when the call is held (wait: false answers hold at once)',
    CallInput,
    async (input) => {
      const chain = await chainOf(ctx, input);
      const decision = await decide(ctx, input.session_id, chain);
      if (decision.decision !== 'hold') return { ...decision, outcome: decision.decision };
      const held = await holdCall(ctx, input, chain, 'wait');
      if ('settled' in held) return answerOf(held.settled);
      if (input.wait === false) return { decision: 'hold', pending: held.record };
      const resolution = await ctx.inbox.wait(held.record.session_id, held.record.function_call_id);
      // settled and forgotten meanwhile (thousands of decisions later): fail closed
      return resolution ? answerOf(resolution) : { decision: 'deny', outcome: 'aborted', reason: 'the pending call was settled elsewhere' };
    },
    { internal: true },
  );

  fn(
    'approval::gate',
    'pre-trigger hook of the harness: {decision: continue | deny (reason) | hold}; a held call is settled later through harness::function::resolve',
    CallInput,
    async (input) => {
      const chain = await chainOf(ctx, input);
      const decision = await decide(ctx, input.session_id, chain);
      if (decision.decision === 'allow') return { decision: 'continue' };
      if (decision.decision === 'deny') return { decision: 'deny', reason: decision.reason };
      const held = await holdCall(ctx, input, chain, 'hook');
      if ('settled' in held)
        return held.settled.outcome === 'allow'
          ? { decision: 'continue' }
          : { decision: 'deny', reason: denialText(held.settled.outcome, held.settled.reason) };
      return { decision: 'hold', pending_timeout_ms: held.record.expires_at - held.record.pending_at };
    },
    { internal: true },
  );

  fn(
    'approval::resolve',
    "Apply a person's decision to a held call; unknown or already settled calls answer {resolved: false}",
    ResolveInput,
    async (input) => {
      const scope = input.grant_scope ?? input.access_duration;
      const record = ctx.inbox.get(input.session_id, input.function_call_id);
      if (record && input.decision === 'allow' && (scope === 'session' || scope === 'always')) {
        // the grant names exactly what was approved: the function, or the whole chain of a wrapper call
        const grantKey = record.grant_key ?? record.function_id;
        await ctx.settings.mutate(input.session_id, (s) => {
          if (!s.approved_always.some((e) => e.function_id === grantKey))
            s.approved_always.push({ function_id: grantKey, granted_at: Date.now(), granted_by: 'user_click' });
        });
      }
      const reason = input.decision === 'deny' ? (input.reason ?? undefined) : undefined;
      return ctx.inbox.resolve(input.session_id, input.function_call_id, input.decision, reason);
    },
  );

  fn(
    'approval::list-pending',
    'Held calls across sessions, oldest first, filtered by session_id and metadata, paged (default 50)',
    ListInput,
    (input) => {
      let records = ctx.inbox.list(
        (r) => (!input.session_id || r.session_id === input.session_id) && metadataMatches(input.metadata ?? undefined, r.session_metadata),
      );
      if (input.cursor) {
        const after = decodeCursor(input.cursor);
        records = records.filter(
          (r) => r.pending_at > after.t || (r.pending_at === after.t && `${r.session_id}/${r.function_call_id}` > after.k),
        );
      }
      const limit = Math.min(input.limit ?? 50, 500);
      const page = records.slice(0, limit);
      const last = page[page.length - 1];
      return {
        pending: page,
        ...(records.length > limit && last
          ? {
              next_cursor: Buffer.from(JSON.stringify({ t: last.pending_at, k: `${last.session_id}/${last.function_call_id}` })).toString(
                'base64url',
              ),
            }
          : {}),
      };
    },
  );

  fn('approval::get-pending', 'One held call, or null when it was resolved or never held', GetInput, (input) => {
    const record = ctx.inbox.get(input.session_id, input.function_call_id);
    return record ? { pending: record } : null;
  });
}

function decodeCursor(cursor: string): { t: number; k: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof value?.t === 'number' && typeof value?.k === 'string') return value;
  } catch {
    // fall through
  }
  throw domainError('approval', 'invalid_payload', 'approval::list-pending: cursor is not a cursor this gate made');
}
