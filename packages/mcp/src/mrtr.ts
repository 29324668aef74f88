import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { EngError } from '@eng/protocol';
import { type EngClient, randomHex } from '@eng/sdk';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ContributionService } from './contributions.ts';
import { NEVER_CANCELLED } from './leg.ts';
import {
  completeOwned,
  completeResult,
  type Envelope,
  META,
  MISSING_CLIENT_CAPABILITY,
  type ModernAnswer,
  type ModernIo,
  type Refusal,
  refusalOf,
  SERVER_INFO,
} from './modern.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import type { McpSession, SessionHub } from './sessions.ts';
import { TASKS_EXTENSION, type TaskService } from './tasks.ts';
import { type CallFunctionIds, callMetadata, type ToolService } from './tools.ts';

// spec 2026-07-28 basic/patterns/mrtr (SEP-2322) — input-required results. A function keeps asking
// its client through `elicitation_function` / `sampling_function` / `roots_function` exactly as on
// 2025-11-25; on a 2026-07-28 request eng-mcp answers the request with
// `{resultType: "input_required", inputRequests, requestState}` instead, keeps the function
// waiting, and hands it the client's `inputResponses` when the request comes back with that
// `requestState` (as many rounds as the function asks). The state is HMAC-signed by the instance
// holding the waiting function; a retry that reaches another instance is forwarded to it through
// the engine (`mcp::<instance>::resume`), so instances behind a load balancer answer as one.

const CAPABILITY_OF: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};
const RESULT_SCHEMA: Record<string, z.ZodType> = {
  'sampling/createMessage': CreateMessageResultSchema,
  'elicitation/create': ElicitResultSchema,
  'roots/list': ListRootsResultSchema,
};
/** How long requests asked of the client are gathered into one input-required result. */
export const GATHER_MS = 25;
const INSTANCE = /^[0-9a-f]{8}$/;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

interface PendingInput {
  method: string;
  params: Record<string, unknown>;
  resolve(value: unknown): void;
}

export interface InputRound {
  round: number;
}

export interface RequestOptions {
  /** The key of the request in `inputRequests` (a function may name it: `input_key`). */
  inputKey?: string;
  signal?: AbortSignal;
}

/** Where an answered leg's notifications go: nowhere (shared: it holds nothing). */
const SILENT_IO: ModernIo = { transport: 'http', notify() {}, leg: NEVER_CANCELLED };

/** One modern request's function call, across the rounds it takes (and, as a task, past them). */
export class ModernCall {
  readonly abort = new AbortController();
  readonly inputs = new Map<string, PendingInput>();
  readonly session: McpSession;
  /** The capability a request to the client needed and the client did not declare (→ -32021). */
  missing?: string;
  /** The function asked to continue as a task (`task_function`); why not, when it cannot. */
  escalated = false;
  canEscalate = false;
  /** The progress token is eng-mcp's (a task reports status through it), not the client's. */
  autoProgress = false;
  inTask = false;
  round = 0;
  parkId?: string;
  wake?: () => void;
  private seq = 0;
  private unlink?: () => void;

  constructor(
    public envelope: Envelope,
    public io: ModernIo,
    id: string,
    transport: McpSession['transport'],
  ) {
    const peer = {
      notification: async (message: JSONRPCNotification) => {
        // progress the client did not ask for (a task's own token) only ever becomes the task's status
        if (this.autoProgress && !this.inTask && message.method === 'notifications/progress') return;
        this.io.notify({ ...message, jsonrpc: '2.0' });
      },
      getClientCapabilities: () => this.envelope.capabilities,
      createMessage: (params: Record<string, unknown>, options?: RequestOptions) =>
        this.ask('sampling/createMessage', params, options?.inputKey),
      request: (request: { method: string; params?: Record<string, unknown> }, _schema: unknown, options?: RequestOptions) =>
        this.ask(request.method, request.params ?? {}, options?.inputKey),
      listRoots: (params?: Record<string, unknown>, options?: RequestOptions) => this.ask('roots/list', params ?? {}, options?.inputKey),
    };
    this.session = {
      id,
      transport,
      server: peer as unknown as Server,
      protocolVersion: envelope.version,
      initialized: envelope.logLevel !== undefined,
      logLevel: envelope.logLevel ?? 'emergency',
      subscriptions: new Set(),
      subscriptionBytes: 0,
      lastActiveMs: Date.now(),
      onMissingCapability: (capability) => {
        this.missing ??= capability;
        this.wake?.();
      },
      escalate: () => {
        if (!this.canEscalate) return 'the client did not declare the io.modelcontextprotocol/tasks extension on this request';
        this.escalated = true;
        this.wake?.();
        return undefined;
      },
    };
    this.link(io);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** A new leg: its stream carries the notifications, its cancellation cancels the call. */
  link(io: ModernIo): void {
    this.unlink?.();
    this.io = io;
    this.unlink = io.leg.onCancel(() => this.abort.abort());
  }

  /** The leg ended (answered): nothing more goes to its stream. */
  unlinkLeg(): void {
    this.unlink?.();
    this.unlink = undefined;
    this.io = SILENT_IO;
  }

  /** Hand answers to the requests they name; a wrong shape stays pending (asked again). Returns how many were taken. */
  answer(responses: Record<string, unknown> | undefined): number {
    let taken = 0;
    for (const [key, input] of [...this.inputs]) {
      const response = responses?.[key];
      if (response === undefined) continue;
      const checked = RESULT_SCHEMA[input.method]?.safeParse(response);
      if (checked && !checked.success) continue;
      this.inputs.delete(key);
      input.resolve(checked ? checked.data : response);
      taken++;
    }
    return taken;
  }

  /** The pending requests as `inputRequests`. */
  inputRequests(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, input] of this.inputs) out[key] = { method: input.method, params: input.params };
    return out;
  }

  /** Answers a fresh request already carries (a stateless retry without requestState): used when their key is asked. */
  preset?: Record<string, unknown>;

  ask(method: string, params: Record<string, unknown>, key?: string): Promise<unknown> {
    const capability = CAPABILITY_OF[method];
    if (capability && !isObject(this.envelope.capabilities[capability])) {
      this.missing ??= capability;
      this.wake?.();
      return Promise.reject(
        new EngError(
          'CLIENT_CAPABILITY_MISSING',
          `the MCP client did not declare the "${capability}" capability, so it cannot be asked for ${method}`,
        ),
      );
    }
    let name = typeof key === 'string' && key !== '' ? key : `${method.replace(/\W+/g, '_')}_${++this.seq}`;
    while (this.inputs.has(name)) name = `${name}_${++this.seq}`;
    const given = this.preset?.[name];
    if (given !== undefined) {
      delete this.preset?.[name];
      const checked = RESULT_SCHEMA[method]?.safeParse(given);
      if (!checked || checked.success) return Promise.resolve(checked ? checked.data : given);
    }
    return new Promise((resolve, reject) => {
      this.inputs.set(name, { method, params, resolve });
      const onAbort = () => {
        this.inputs.delete(name);
        reject(new EngError('CANCELLED', `the client cancelled the request while it was asked for ${method}`));
      };
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
      this.wake?.();
    });
  }
}

interface Parked {
  call: ModernCall;
  work: Promise<Record<string, unknown>>;
  /** What the retry must be: the method and its name or uri. */
  what: string;
  timer: NodeJS.Timeout;
}

interface ResumeInput {
  state: string;
  responses: unknown;
  envelope: Envelope;
  what: string;
}

export interface MrtrDeps {
  client: EngClient;
  hub: SessionHub;
  tools: ToolService;
  contributions: ContributionService;
  functionIds: CallFunctionIds;
  /** This instance's id, as in its `mcp::<instance>::…` functions. */
  instance: string;
  /** How long a function may wait for the client's answer (then the call is cancelled). */
  waitMs: number;
  /** The tasks extension (tasks.ts): calls that continue as tasks. */
  tasks?: TaskService;
}

export class MrtrStore {
  private readonly secret = randomBytes(32);
  private readonly parked = new Map<string, Parked>();

  constructor(private readonly deps: MrtrDeps) {}

  get resumeFunctionId(): string {
    return `mcp::${this.deps.instance}::resume`;
  }

  /** The engine function other instances forward retries to. */
  register(): void {
    this.deps.client.registerFunction(
      this.resumeFunctionId,
      async (input) => {
        const q = input as ResumeInput;
        try {
          return { result: await this.resumeHere(q.state, q.responses, q.envelope, SILENT_IO, q.what) };
        } catch (err) {
          return { error: refusalOf(err) };
        }
      },
      {
        description: 'eng-mcp: continue a 2026-07-28 request waiting for client input (MRTR) on this instance',
        metadata: { internal: true },
      },
    );
  }

  /** A request's session-shaped view without a function call (lists). */
  session(id: RequestId, envelope: Envelope, io: ModernIo): McpSession {
    return new ModernCall(envelope, io, `request:${String(id)}`, io.transport).session;
  }

  async callTool(message: JSONRPCRequest, envelope: Envelope, io: ModernIo): Promise<Record<string, unknown>> {
    const p = (message.params ?? {}) as Record<string, unknown> & { _meta?: { progressToken?: unknown } };
    if (typeof p.name !== 'string' || p.name === '')
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: name must be a non-empty string');
    if (p.arguments !== undefined && !isObject(p.arguments))
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: arguments must be an object');
    const what = `tools/call ${p.name}`;
    if (p.requestState !== undefined) return this.resume(p.requestState, p.inputResponses, envelope, io, what);
    const call = new ModernCall(envelope, io, randomHex(8), io.transport);
    if (isObject(p.inputResponses)) call.preset = { ...p.inputResponses };
    const token = p._meta?.progressToken;
    const { tasks } = this.deps;
    const mode = tasks ? await this.deps.tools.taskModeOf(p.name) : undefined;
    const declared = isObject(envelope.capabilities.extensions) && TASKS_EXTENSION in envelope.capabilities.extensions;
    if (mode?.support === 'required' && !declared) {
      throw new RpcError(
        MISSING_CLIENT_CAPABILITY,
        `Missing required client capability: the tool ${p.name} runs as a task only; declare the ${TASKS_EXTENSION} extension in clientCapabilities.extensions`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
    }
    call.canEscalate = Boolean(mode && declared);
    call.autoProgress = call.canEscalate && typeof token !== 'string' && typeof token !== 'number';
    const asTask = Boolean(tasks && mode && declared && mode.start === 'immediate');
    const work = this.deps.tools
      .call(p.name, p.arguments as Record<string, unknown> | undefined, {
        session: call.session,
        requestId: message.id,
        // a task's function can always report its status (progress_function with a message)
        progressToken: typeof token === 'string' || typeof token === 'number' ? token : call.canEscalate ? call.session.id : undefined,
        signal: call.signal,
        throwFailures: call.canEscalate,
      })
      .then((result) => completeOwned(result as Record<string, unknown>));
    if (asTask && tasks) return tasks.adopt(call, work, what);
    return this.settle(call, work, what);
  }

  async readResource(message: JSONRPCRequest, uri: string, envelope: Envelope, io: ModernIo): Promise<Record<string, unknown>> {
    const p = (message.params ?? {}) as Record<string, unknown>;
    const what = `resources/read ${uri}`;
    if (p.requestState !== undefined) return this.resume(p.requestState, p.inputResponses, envelope, io, what);
    const call = new ModernCall(envelope, io, randomHex(8), io.transport);
    const work = this.withSlot(call, message.id, (meta) => this.deps.contributions.read(uri, meta)).then((read) => {
      if (!read) throw new RpcError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
      return completeResult(read, 'private');
    });
    return this.settle(call, work, what);
  }

  async getPrompt(
    message: JSONRPCRequest,
    name: string,
    args: Record<string, string> | undefined,
    envelope: Envelope,
    io: ModernIo,
  ): Promise<Record<string, unknown>> {
    const p = (message.params ?? {}) as Record<string, unknown>;
    const what = `prompts/get ${name}`;
    if (p.requestState !== undefined) return this.resume(p.requestState, p.inputResponses, envelope, io, what);
    const call = new ModernCall(envelope, io, randomHex(8), io.transport);
    const work = this.withSlot(call, message.id, (meta) => this.deps.contributions.getPrompt(name, args, meta)).then((rendered) => {
      if (!rendered) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return completeResult(rendered);
    });
    return this.settle(call, work, what);
  }

  /** A call slot (the token a function passes back) for a resource read or a prompt. */
  private async withSlot<T>(call: ModernCall, requestId: RequestId, run: (meta: Record<string, unknown>) => Promise<T>): Promise<T> {
    const slot = this.deps.hub.openCall(call.session, requestId, call.signal);
    try {
      return await run(callMetadata(this.deps.functionIds, call.session, slot.key));
    } finally {
      slot.close();
    }
  }

  /**
   * Wait for the call to finish, or to ask the client something: then answer input_required and
   * keep it waiting for the retry.
   */
  private settle(call: ModernCall, work: Promise<Record<string, unknown>>, what: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: () => Record<string, unknown> | Promise<Record<string, unknown>>) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        call.wake = undefined;
        call.unlinkLeg();
        try {
          Promise.resolve(outcome()).then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      };
      const missing = () => {
        const capability = call.missing as string;
        call.abort.abort();
        return new RpcError(
          MISSING_CLIENT_CAPABILITY,
          `Missing required client capability: this request needs the client's "${capability}" capability, which its _meta did not declare`,
          { requiredCapabilities: { [capability]: {} } },
        );
      };
      call.wake = () => {
        if (call.missing) {
          finish(() => {
            throw missing();
          });
          return;
        }
        if (call.escalated && this.deps.tasks) {
          const tasks = this.deps.tasks;
          finish(() => tasks.adopt(call, work, what));
          return;
        }
        if (timer || call.inputs.size === 0) return;
        timer = setTimeout(() => finish(() => this.park(call, work, what)), GATHER_MS);
      };
      work.then(
        (result) =>
          finish(() => {
            if (call.missing) throw missing();
            return result;
          }),
        (err) =>
          finish(() => {
            throw call.missing ? missing() : err;
          }),
      );
      if (call.missing || call.escalated || call.inputs.size > 0) call.wake();
    });
  }

  private park(call: ModernCall, work: Promise<Record<string, unknown>>, what: string): Record<string, unknown> {
    call.round++;
    call.parkId ??= randomBytes(12).toString('base64url');
    const previous = this.parked.get(call.parkId);
    if (previous) clearTimeout(previous.timer);
    const timer = setTimeout(() => {
      this.parked.delete(call.parkId as string);
      call.abort.abort();
    }, this.deps.waitMs);
    timer.unref();
    this.parked.set(call.parkId, { call, work, what, timer });
    return {
      resultType: 'input_required',
      inputRequests: call.inputRequests(),
      requestState: this.seal({ i: this.deps.instance, p: call.parkId, r: call.round }),
      _meta: { [META.serverInfo]: SERVER_INFO },
    };
  }

  private seal(state: { i: string; p: string; r: number }): string {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${body}.${createHmac('sha256', this.secret).update(body).digest('base64url')}`;
  }

  /** The state's claims, unverified (only the owner can verify); throws when it cannot be read at all. */
  private claims(state: unknown): { i: string; p: string; r: number; body: string; mac: string } {
    const bad = () => new RpcError(ErrorCode.InvalidParams, 'Invalid params: requestState was not issued by this server or was altered');
    if (typeof state !== 'string') throw bad();
    const [body, mac, extra] = state.split('.');
    if (!body || !mac || extra !== undefined) throw bad();
    try {
      const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { i?: unknown; p?: unknown; r?: unknown };
      if (typeof parsed.i !== 'string' || !INSTANCE.test(parsed.i) || typeof parsed.p !== 'string' || typeof parsed.r !== 'number')
        throw bad();
      return { i: parsed.i, p: parsed.p, r: parsed.r, body, mac };
    } catch {
      throw bad();
    }
  }

  private async resume(
    state: unknown,
    responses: unknown,
    envelope: Envelope,
    io: ModernIo,
    what: string,
  ): Promise<Record<string, unknown>> {
    const claims = this.claims(state);
    if (claims.i === this.deps.instance) return this.resumeHere(state as string, responses, envelope, io, what);
    // another instance holds the waiting function: it continues there, and answers through us
    let answer: ModernAnswer;
    try {
      answer = await this.deps.client.trigger<ModernAnswer>({
        function_id: `mcp::${claims.i}::resume`,
        payload: { state: state as string, responses, envelope, what } satisfies ResumeInput,
        timeoutMs: this.deps.waitMs,
      });
    } catch (err) {
      const { code } = (err ?? {}) as { code?: unknown };
      if (code === 'function_not_found' || code === 'NOT_FOUND') {
        throw new RpcError(
          ErrorCode.InvalidParams,
          'Invalid params: requestState belongs to an eng-mcp instance that is gone; call again without it',
        );
      }
      throw err;
    }
    if ('error' in answer) throw Object.assign(new RpcError((answer.error as Refusal).code, answer.error.message, answer.error.data));
    return answer.result;
  }

  private async resumeHere(
    state: string,
    responses: unknown,
    envelope: Envelope,
    io: ModernIo,
    what: string,
  ): Promise<Record<string, unknown>> {
    const claims = this.claims(state);
    const expected = createHmac('sha256', this.secret).update(claims.body).digest();
    const given = Buffer.from(claims.mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: requestState was not issued by this server or was altered');
    }
    const parked = this.parked.get(claims.p);
    if (!parked || parked.call.round !== claims.r || parked.what !== what) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        'Invalid params: requestState is expired, already used, or for another request: call again without it',
      );
    }
    if (responses !== undefined && !isObject(responses)) {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: inputResponses must be an object keyed by the inputRequests keys');
    }
    this.parked.delete(claims.p);
    clearTimeout(parked.timer);
    const { call } = parked;
    call.envelope = envelope;
    call.session.logLevel = envelope.logLevel ?? 'emergency';
    call.session.initialized = envelope.logLevel !== undefined;
    call.link(io);
    // an answer of the wrong shape is asked again, like a missing one
    call.answer(responses as Record<string, unknown> | undefined);
    return this.settle(call, parked.work, what);
  }

  /** Cancel every waiting call (shutdown). */
  close(): void {
    for (const parked of this.parked.values()) {
      clearTimeout(parked.timer);
      parked.call.abort.abort();
    }
    this.parked.clear();
  }
}
