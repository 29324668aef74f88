import type { IncomingMessage } from 'node:http';
import {
  type ErrorBody,
  ErrorCode,
  type InvokeFunction,
  type Message,
  type RegisterFunction,
  type RegisterTrigger,
  type RegisterTriggerType,
} from '@eng/protocol';
import { z } from 'zod';
import type { Core } from '../core/core.ts';
import type { InvokeOutcome, Settle } from '../core/invoker.ts';
import type { Logger } from '../log.ts';

// spec: engine-protocol §2.13 (RBAC and worker-manager config), §2.5 step 3 (FORBIDDEN, middleware).

/** `match("glob")` / `match('glob')` → the glob; anything else → undefined. */
function unwrapMatch(text: string): string | undefined {
  const t = text.trim();
  const m = /^match\((["'])(.*)\1\)$/.exec(t);
  return m ? m[2] : undefined;
}

/** `*` matches any run of characters; anchored at both ends; case-sensitive (as iii). */
export function globMatcher(glob: string): (value: string) => boolean {
  if (glob === '*') return () => true;
  if (!glob.includes('*')) return (value) => value === glob;
  const re = new RegExp(
    `^${glob
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return (value) => re.test(value);
}

/** A grant from the auth function: an exact id, a bare glob (`svc::*`) or `match("svc::*")`. */
function grantMatcher(grant: string): (id: string) => boolean {
  return globMatcher(unwrapMatch(grant) ?? grant);
}

type MetadataMatcher = (value: unknown) => boolean;

function metadataValueMatcher(expected: unknown): MetadataMatcher {
  if (typeof expected === 'string') {
    const glob = unwrapMatch(expected);
    if (glob !== undefined) {
      const match = globMatcher(glob);
      return (value) => typeof value === 'string' && match(value);
    }
  }
  const text = JSON.stringify(expected);
  return (value) => JSON.stringify(value) === text;
}

/** One `expose_functions` rule: `match("glob")`, `{match: "glob"}` or `{metadata: {key: value | match("glob")}}`. */
export const FunctionFilterSchema = z.union([
  z.string().refine((s) => unwrapMatch(s) !== undefined, { error: 'a string rule must be match("pattern"), e.g. match("api::*")' }),
  z.object({ match: z.string().min(1) }).strict(),
  z
    .object({
      metadata: z.record(z.string(), z.unknown()).refine((m) => Object.keys(m).length > 0, { error: 'metadata needs at least one key' }),
    })
    .strict(),
]);
export type FunctionFilter = z.infer<typeof FunctionFilterSchema>;

export const RbacConfigSchema = z
  .object({
    /** Called once per connection with {headers, query_params, ip_address}; its result is the session's grants. */
    auth_function_id: z.string().min(1).optional(),
    /** Functions every connection of this bus may call (any rule matches); the auth function adds and removes. */
    expose_functions: z.array(FunctionFilterSchema).default([]),
    on_function_registration_function_id: z.string().min(1).optional(),
    on_trigger_registration_function_id: z.string().min(1).optional(),
    on_trigger_type_registration_function_id: z.string().min(1).optional(),
  })
  .strict();
export type RbacConfig = z.infer<typeof RbacConfigSchema>;

function compileFilter(filter: FunctionFilter): (id: string, metadata: Record<string, unknown> | null | undefined) => boolean {
  if (typeof filter === 'string') {
    const match = globMatcher(unwrapMatch(filter) as string);
    return (id) => match(id);
  }
  if ('match' in filter) {
    const match = globMatcher(unwrapMatch(filter.match) ?? filter.match);
    return (id) => match(id);
  }
  const checks = Object.entries(filter.metadata).map(([key, value]) => [key, metadataValueMatcher(value)] as const);
  // a function with no metadata never matches a metadata rule
  return (_id, metadata) => !!metadata && checks.every(([key, check]) => Object.hasOwn(metadata, key) && check(metadata[key]));
}

/**
 * Always callable on an RBAC bus (iii's INFRASTRUCTURE_FUNCTIONS): connection setup, channels,
 * logging and baggage, unless the auth function forbids them explicitly.
 */
const INFRASTRUCTURE = new Set([
  'engine::channels::create',
  'engine::workers::register',
  'engine::log::info',
  'engine::log::warn',
  'engine::log::error',
  'engine::log::debug',
  'engine::log::trace',
  'engine::baggage::get',
  'engine::baggage::set',
  'engine::baggage::get_all',
]);

/** What the auth function returns (§2.13); unknown keys are ignored, as iii does. */
const AuthResultSchema = z.object({
  allowed_functions: z.array(z.string()).nullish(),
  forbidden_functions: z.array(z.string()).nullish(),
  allowed_trigger_types: z.array(z.string()).nullish(),
  allow_trigger_type_registration: z.boolean().nullish(),
  allow_function_registration: z.boolean().nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  function_registration_prefix: z.string().min(1).nullish(),
});

/** What one connection may do, from the auth function's result (defaults without one). */
export interface Grants {
  allowed: Array<(id: string) => boolean>;
  forbidden: Array<(id: string) => boolean>;
  allowedTriggerTypes?: Set<string>;
  allowTriggerTypeRegistration: boolean;
  allowFunctionRegistration: boolean;
  context: Record<string, unknown>;
  prefix?: string;
}

const AUTH_TIMEOUT_MS = 10_000;
const HOOK_TIMEOUT_MS = 10_000;

export const AuthErrorCode = 'AUTH_ERROR';

/** The connection a session speaks for; implemented by WorkerConnection. */
export interface SessionConnection {
  readonly id: string;
  /** Handle a frame as an open bus does (after the session let it through, maybe rewritten). */
  process(message: Message, raw: Buffer): void;
  sendResult(invocationId: string, functionId: string, outcome: InvokeOutcome): void;
  send(frame: object | string | Buffer): boolean;
}

/** A bus's `middleware_function_id` and `rbac`: authenticates connections and opens their sessions. */
export class BusPolicy {
  private readonly expose: Array<(id: string, metadata: Record<string, unknown> | null | undefined) => boolean>;

  constructor(
    readonly core: Core,
    readonly middlewareFunctionId: string | undefined,
    readonly rbac: RbacConfig | undefined,
    readonly log: Logger,
  ) {
    this.expose = (rbac?.expose_functions ?? []).map(compileFilter);
  }

  exposed(id: string, metadata: Record<string, unknown> | null | undefined): boolean {
    return this.expose.some((rule) => rule(id, metadata));
  }

  /** Run the auth function for an upgrade request; resolves the grants or an AUTH_ERROR. */
  async authenticate(req: IncomingMessage): Promise<{ ok: true; grants: Grants } | { ok: false; error: ErrorBody }> {
    const authId = this.rbac?.auth_function_id;
    if (!authId) {
      return {
        ok: true,
        grants: { allowed: [], forbidden: [], allowTriggerTypeRegistration: true, allowFunctionRegistration: true, context: {} },
      };
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const query_params: Record<string, string[]> = {};
    const url = new URL(req.url ?? '/', 'http://bus');
    for (const [key, value] of url.searchParams) {
      const values = query_params[key] ?? [];
      values.push(value);
      query_params[key] = values;
    }
    const ip_address = req.socket?.remoteAddress ?? '';
    const outcome = await this.core.invoker.invoke(authId, { headers, query_params, ip_address }, { timeoutMs: AUTH_TIMEOUT_MS });
    if (!outcome.ok) {
      return {
        ok: false,
        error: { code: AuthErrorCode, message: `auth function ${authId} failed: ${outcome.error.code}: ${outcome.error.message}` },
      };
    }
    if (outcome.result === undefined || outcome.result === null) {
      return { ok: false, error: { code: AuthErrorCode, message: 'auth function returned no result' } };
    }
    const parsed = AuthResultSchema.safeParse(outcome.result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        error: {
          code: AuthErrorCode,
          message: `auth function ${authId} returned an invalid result: ${issue?.path.join('.') || '(result)'}: ${issue?.message}`,
        },
      };
    }
    const r = parsed.data;
    return {
      ok: true,
      grants: {
        allowed: (r.allowed_functions ?? []).map(grantMatcher),
        forbidden: (r.forbidden_functions ?? []).map(grantMatcher),
        allowedTriggerTypes: r.allowed_trigger_types ? new Set(r.allowed_trigger_types) : undefined,
        allowTriggerTypeRegistration: r.allow_trigger_type_registration ?? false,
        allowFunctionRegistration: r.allow_function_registration ?? true,
        context: r.context ?? {},
        prefix: r.function_registration_prefix ?? undefined,
      },
    };
  }
}

type HookVerdict<T> = { ok: true; mapped: Partial<T> } | { ok: false; message: string };

/**
 * One connection's RBAC session: every frame from the worker passes here first. Invocations are
 * checked (and routed through the middleware) at once; registrations may wait for a hook, and the
 * frames after them wait too, so a worker's frames keep their order.
 */
export class BusSession {
  /** engine id → the id the worker registered (prefix and hook mappings), and back. */
  private readonly toWorker = new Map<string, string>();
  private readonly toEngine = new Map<string, string>();
  /** Trigger types and trigger ids a hook renamed: engine → worker, worker → engine. */
  private readonly typeToWorker = new Map<string, string>();
  private readonly triggerToEngine = new Map<string, string>();
  private readonly backlog: Array<[Message, Buffer]> = [];
  private busy = false;

  constructor(
    private readonly policy: BusPolicy,
    private readonly grants: Grants,
    private readonly conn: SessionConnection,
  ) {}

  get context(): Record<string, unknown> {
    return this.grants.context;
  }

  receive(message: Message, raw: Buffer): void {
    if (this.busy) {
      this.backlog.push([message, raw]);
      return;
    }
    this.run(message, raw);
  }

  private run(message: Message, raw: Buffer): void {
    const pending = this.step(message, raw);
    if (!pending) return;
    this.busy = true;
    void pending.then(() => {
      this.busy = false;
      while (!this.busy && this.backlog.length > 0) {
        const [next, nextRaw] = this.backlog.shift() as [Message, Buffer];
        this.run(next, nextRaw);
      }
    });
  }

  /** Frames the engine sends this worker: ids it knows under another name get theirs back. */
  outgoing(frame: object | string | Buffer): object | string | Buffer {
    if (typeof frame === 'string' || Buffer.isBuffer(frame)) return frame;
    const f = frame as { type?: string; function_id?: string; trigger_type?: string };
    if ((f.type === 'invokefunction' || f.type === 'cancelinvocation') && f.function_id && this.toWorker.size) {
      const mine = this.toWorker.get(f.function_id);
      if (mine !== undefined && mine !== f.function_id) return { ...f, function_id: mine };
    } else if ((f.type === 'registertrigger' || f.type === 'unregistertrigger') && f.trigger_type && this.typeToWorker.size) {
      const mine = this.typeToWorker.get(f.trigger_type);
      if (mine !== undefined) return { ...f, trigger_type: mine };
    }
    return frame;
  }

  private step(message: Message, raw: Buffer): Promise<void> | undefined {
    // a bus with only a middleware checks no registration
    const rbac = !!this.policy.rbac;
    switch (message.type) {
      case 'invokefunction':
        this.invoke(message, raw);
        return undefined;
      case 'registerfunction':
        if (rbac) return this.guard(this.registerFunction(message, raw));
        break;
      case 'unregisterfunction': {
        const engineId = this.toEngine.get(message.id) ?? message.id;
        this.toEngine.delete(message.id);
        this.toWorker.delete(engineId);
        this.conn.process(engineId !== message.id ? { ...message, id: engineId } : message, raw);
        return undefined;
      }
      case 'registertriggertype':
        if (rbac) return this.guard(this.registerTriggerType(message, raw));
        break;
      case 'registertrigger':
        if (rbac) return this.guard(this.registerTrigger(message, raw));
        break;
      case 'unregistertrigger': {
        const engineId = this.triggerToEngine.get(message.id);
        this.conn.process(engineId ? { ...message, id: engineId } : message, raw);
        return undefined;
      }
    }
    this.conn.process(message, raw);
    return undefined;
  }

  private guard(work: Promise<void>): Promise<void> {
    return work.catch((err: Error) => this.policy.log.error(`RBAC session ${this.conn.id}: ${err.message}`));
  }

  // ── invocations ──────────────────────────────────────────────────────────

  /** Why this session may not call `id` (an engine id), or null when it may (spec §2.13 order). */
  denial(id: string): ErrorBody | null {
    if (!this.policy.rbac) return null;
    if (this.toWorker.has(id)) return null; // its own function
    const g = this.grants;
    if (g.forbidden.some((m) => m(id))) {
      return { code: ErrorCode.Forbidden, message: `function '${id}' not allowed (forbidden for this connection by the auth function)` };
    }
    if (g.allowed.some((m) => m(id))) return null;
    if (INFRASTRUCTURE.has(id)) return null;
    if (this.policy.exposed(id, this.policy.core.functions.lookup(id)?.metadata)) return null;
    return { code: ErrorCode.Forbidden, message: `function '${id}' not allowed (add to rbac.expose_functions)` };
  }

  private invoke(message: InvokeFunction, raw: Buffer): void {
    const asked = message.function_id;
    // a worker calling its own function by the name it registered reaches it under the prefix
    const target = this.toEngine.get(asked) ?? asked;
    const invocationId = message.invocation_id ?? undefined;
    const noReply = message.action?.type === 'void' || !invocationId;
    const denied = this.denial(target);
    if (denied) {
      this.policy.log.warn(`connection ${this.conn.id} denied ${target}: ${denied.message}`);
      if (!noReply) this.conn.sendResult(invocationId as string, asked, { ok: false, error: denied });
      return;
    }
    const middleware = this.policy.middlewareFunctionId;
    if (middleware && !this.bypassesMiddleware(target)) {
      this.viaMiddleware(middleware, message, target, noReply ? undefined : (invocationId as string));
      return;
    }
    if (this.policy.rbac && target === 'engine::functions::list' && !noReply) {
      this.listVisible(message, invocationId as string);
      return;
    }
    this.conn.process(target === asked ? message : { ...message, function_id: target }, raw);
  }

  /** Engine-owned built-ins (`engine::*` served by a module) never go through the middleware (as iii). */
  private bypassesMiddleware(id: string): boolean {
    if (!id.startsWith('engine::')) return false;
    const entry = this.policy.core.functions.get(id);
    return !entry || entry.ownerWorkerId === null;
  }

  /** spec §2.5 step 3: the middleware gets {function_id, payload, action, context}; its result is the call's. */
  private viaMiddleware(middleware: string, message: InvokeFunction, target: string, invocationId: string | undefined): void {
    const reply: Settle = invocationId
      ? { settle: (outcome) => this.conn.sendResult(invocationId, message.function_id, { ...outcome, rawFrame: undefined }) }
      : { settle() {} };
    if (!this.policy.core.functions.has(middleware)) {
      reply.settle({
        ok: false,
        error: {
          code: ErrorCode.FunctionNotFound,
          message: `middleware_function_id ${middleware} of this bus is not registered: calls through this bus fail until it is`,
        },
      });
      return;
    }
    const input: Record<string, unknown> = {
      function_id: target,
      payload: message.data ?? null,
      context: this.grants.context,
    };
    if (message.action) input.action = message.action;
    this.policy.core.invoker.dispatch(
      middleware,
      input,
      {
        invocationId,
        callerWorkerId: this.conn.id,
        traceparent: message.traceparent ?? undefined,
        baggage: message.baggage ?? undefined,
        metadata: message.metadata,
      },
      reply,
    );
  }

  /** `engine::functions::list` on an RBAC bus lists only what this connection may call. */
  private listVisible(message: InvokeFunction, invocationId: string): void {
    this.policy.core.invoker.dispatch(
      'engine::functions::list',
      message.data,
      { invocationId, callerWorkerId: this.conn.id, traceparent: message.traceparent ?? undefined, baggage: message.baggage ?? undefined },
      {
        settle: (outcome) => {
          if (outcome.ok && outcome.result && typeof outcome.result === 'object') {
            const result = outcome.result as { functions?: Array<{ function_id: string }> };
            if (Array.isArray(result.functions)) {
              const functions = result.functions.filter((f) => this.denial(f.function_id) === null);
              this.conn.sendResult(invocationId, message.function_id, { ok: true, result: { ...result, functions } });
              return;
            }
          }
          this.conn.sendResult(invocationId, message.function_id, { ...outcome, rawFrame: undefined });
        },
      },
    );
  }

  // ── registrations ────────────────────────────────────────────────────────

  /** Call a registration hook. A throw, `false` or a non-object result denies; `true` or an object allows (fields map). */
  private async hook<T>(hookId: string | undefined, what: string, input: Record<string, unknown>): Promise<HookVerdict<T>> {
    if (!hookId) return { ok: true, mapped: {} };
    const outcome = await this.policy.core.invoker.invoke(
      hookId,
      { ...input, context: this.grants.context },
      { timeoutMs: HOOK_TIMEOUT_MS },
    );
    if (!outcome.ok) return { ok: false, message: `${what} denied by ${hookId}: ${outcome.error.code}: ${outcome.error.message}` };
    const result = outcome.result;
    if (result === true) return { ok: true, mapped: {} };
    if (result && typeof result === 'object' && !Array.isArray(result)) return { ok: true, mapped: result as Partial<T> };
    return { ok: false, message: `${what} denied by ${hookId} (it returned ${JSON.stringify(result) ?? 'no result'})` };
  }

  private reject(subject: { function_id: string } | { trigger_type: string }, message: string): void {
    this.policy.log.warn(`connection ${this.conn.id}: ${message}`);
    this.conn.send({ type: 'registrationrejected', code: ErrorCode.Forbidden, message, ...subject });
  }

  private async registerFunction(message: RegisterFunction, raw: Buffer): Promise<void> {
    if (!this.grants.allowFunctionRegistration) {
      this.reject(
        { function_id: message.id },
        `registration of function '${message.id}' not allowed: the auth function returned allow_function_registration: false`,
      );
      return;
    }
    const verdict = await this.hook<{ function_id: string; description: string; metadata: Record<string, unknown> }>(
      this.policy.rbac?.on_function_registration_function_id,
      `registration of function '${message.id}'`,
      { function_id: message.id, description: message.description ?? undefined, metadata: message.metadata ?? undefined },
    );
    if (!verdict.ok) {
      this.reject({ function_id: message.id }, verdict.message);
      return;
    }
    const { mapped } = verdict;
    const id = typeof mapped.function_id === 'string' && mapped.function_id ? mapped.function_id : message.id;
    // spec §2.13: the prefix makes it `prefix::id`; calls back to this worker use its own name again
    const engineId = this.grants.prefix ? `${this.grants.prefix}::${id}` : id;
    if (engineId !== message.id) {
      this.toEngine.set(message.id, engineId);
      this.toWorker.set(engineId, message.id);
    } else {
      this.toWorker.set(engineId, engineId);
    }
    this.conn.process(
      {
        ...message,
        id: engineId,
        description: typeof mapped.description === 'string' ? mapped.description : message.description,
        metadata: mapped.metadata && typeof mapped.metadata === 'object' ? mapped.metadata : message.metadata,
      },
      raw,
    );
  }

  private async registerTriggerType(message: RegisterTriggerType, raw: Buffer): Promise<void> {
    if (!this.grants.allowTriggerTypeRegistration) {
      this.reject(
        { trigger_type: message.id },
        `registration of trigger type '${message.id}' not allowed: the auth function did not return allow_trigger_type_registration: true`,
      );
      return;
    }
    const verdict = await this.hook<{ trigger_type_id: string; description: string }>(
      this.policy.rbac?.on_trigger_type_registration_function_id,
      `registration of trigger type '${message.id}'`,
      { trigger_type_id: message.id, description: message.description ?? '' },
    );
    if (!verdict.ok) {
      this.reject({ trigger_type: message.id }, verdict.message);
      return;
    }
    const id =
      typeof verdict.mapped.trigger_type_id === 'string' && verdict.mapped.trigger_type_id ? verdict.mapped.trigger_type_id : message.id;
    if (id !== message.id) this.typeToWorker.set(id, message.id);
    const description = typeof verdict.mapped.description === 'string' ? verdict.mapped.description : message.description;
    this.conn.process({ ...message, id, description }, raw);
  }

  private async registerTrigger(message: RegisterTrigger, raw: Buffer): Promise<void> {
    const refuse = (text: string) => {
      this.policy.log.warn(`connection ${this.conn.id}: ${text}`);
      this.conn.send({
        type: 'triggerregistrationresult',
        id: message.id,
        trigger_type: message.trigger_type,
        function_id: message.function_id,
        error: { code: ErrorCode.Forbidden, message: text },
      });
    };
    const allowedTypes = this.grants.allowedTriggerTypes;
    if (allowedTypes && !allowedTypes.has(message.trigger_type)) {
      refuse(
        `trigger type '${message.trigger_type}' not allowed for this connection (allowed_trigger_types: ${[...allowedTypes].join(', ') || 'none'})`,
      );
      return;
    }
    const verdict = await this.hook<{ trigger_id: string; trigger_type: string; function_id: string; config: unknown }>(
      this.policy.rbac?.on_trigger_registration_function_id,
      `registration of trigger ${message.id} (${message.trigger_type} → ${message.function_id})`,
      {
        trigger_id: message.id,
        trigger_type: message.trigger_type,
        function_id: message.function_id,
        config: message.config ?? {},
        metadata: message.metadata ?? undefined,
      },
    );
    if (!verdict.ok) {
      refuse(verdict.message);
      return;
    }
    const { mapped } = verdict;
    const pick = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : fallback);
    const triggerId = pick(mapped.trigger_id, message.id);
    const triggerType = pick(mapped.trigger_type, message.trigger_type);
    const functionId = pick(mapped.function_id, message.function_id);
    // the binding makes the engine call the function later, outside this gate: check it now
    const target = this.toEngine.get(functionId) ?? functionId;
    const denied = this.denial(target);
    if (denied) {
      refuse(denied.message);
      return;
    }
    if (triggerId !== message.id) this.triggerToEngine.set(message.id, triggerId);
    this.conn.process(
      {
        ...message,
        id: triggerId,
        trigger_type: triggerType,
        function_id: target,
        config: mapped.config !== undefined ? mapped.config : message.config,
      },
      raw,
    );
  }
}
