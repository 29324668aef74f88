import { randomUUID } from 'node:crypto';
import type { EngClient } from '@eng/sdk';
import type { JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { EngineView } from './engine-view.ts';
import { NEVER_CANCELLED } from './leg.ts';
import type { Log } from './log.ts';
import { META, MISSING_CLIENT_CAPABILITY, type ModernIo, refusalOf, SERVER_INFO } from './modern.ts';
import { GATHER_MS, type ModernCall } from './mrtr.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';

// The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663). A tool call of a
// function whose metadata has `"mcp.task"` becomes a task when the client declares the extension:
// the client gets a CreateTaskResult at once and polls `tasks/get`; the function runs on. Task
// records live in the engine's state store (scope `mcp.tasks`), written before the handle goes
// out, so any eng-mcp instance on the engine answers `tasks/get`, and a record outlives the
// instance that ran it (a task whose instance is gone reads as failed). A task asking its client
// for input (elicitation, sampling, roots: the same per-call functions as ever) is
// `input_required` with the requests in `inputRequests`, answered by `tasks/update`.

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const TASK_SCOPE = 'mcp.tasks';
export const TASK_TTL_MS = 3_600_000;
export const TASK_POLL_MS = 500;

type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
const TERMINAL = new Set<Status>(['completed', 'failed', 'cancelled']);

export interface TaskRecord {
  taskId: string;
  status: Status;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  /** The eng-mcp instance running it, and what it is (not sent to clients). */
  owner: string;
  what: string;
}

interface Running {
  call: ModernCall;
  record: TaskRecord;
  cancelled: boolean;
  chain: Promise<void>;
  timer?: NodeJS.Timeout;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** What a client sees of a record. */
function publicOf(record: TaskRecord): Record<string, unknown> {
  const { owner: _owner, what: _what, ...task } = record;
  return task;
}

export function requireTasks(capabilities: Record<string, unknown>, method: string): void {
  const extensions = capabilities.extensions;
  if (isObject(extensions) && TASKS_EXTENSION in extensions) return;
  throw new RpcError(MISSING_CLIENT_CAPABILITY, `Missing required client capability: ${method} needs the ${TASKS_EXTENSION} extension`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

export interface TaskDeps {
  client: EngClient;
  view: EngineView;
  instance: string;
  log: Log;
  /** A task record changed in the engine (whichever instance wrote it): its status notification. */
  onChange?: (taskId: string, task: Record<string, unknown>) => void;
}

/** What a change of a record is worth telling: its status, message or pending input requests moved. */
function worthTelling(before: TaskRecord | undefined, after: TaskRecord): boolean {
  if (!before) return true;
  if (before.status !== after.status || before.statusMessage !== after.statusMessage) return true;
  const keys = (r: TaskRecord) => Object.keys(r.inputRequests ?? {}).join('\n');
  return keys(before) !== keys(after);
}

export class TaskService {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: TaskDeps) {}

  private fn(owner: string, what: 'task_update' | 'task_cancel' | 'task_changed'): string {
    return `mcp::${owner}::${what}`;
  }

  /** The engine functions other instances reach this one's running tasks through. */
  register(): void {
    const internal = { internal: true };
    this.deps.client.registerFunction(
      this.fn(this.deps.instance, 'task_update'),
      (input) => {
        const { taskId, responses } = input as { taskId: string; responses: Record<string, unknown> };
        this.answerHere(taskId, responses);
        return { ok: true };
      },
      { description: 'eng-mcp: hand tasks/update input to a task this instance runs', metadata: internal },
    );
    this.deps.client.registerFunction(
      this.fn(this.deps.instance, 'task_cancel'),
      (input) => {
        this.cancelHere((input as { taskId: string }).taskId);
        return { ok: true };
      },
      { description: 'eng-mcp: cancel a task this instance runs', metadata: internal },
    );
    // tasks extension (SEP-2663) notifications/tasks: every record write reaches every instance
    // through the engine's state trigger, so a listener hears of tasks another instance runs
    const changed = this.fn(this.deps.instance, 'task_changed');
    this.deps.client.registerFunction(
      changed,
      (input) => {
        const event = (input ?? {}) as { key?: unknown; old_value?: unknown; new_value?: unknown };
        const after = event.new_value;
        if (typeof event.key !== 'string' || !isObject(after) || typeof after.taskId !== 'string' || after.taskId !== event.key)
          return null;
        const before = isObject(event.old_value) ? (event.old_value as unknown as TaskRecord) : undefined;
        const record = after as unknown as TaskRecord;
        if (worthTelling(before, record)) this.deps.onChange?.(record.taskId, publicOf(record));
        return null;
      },
      { description: 'eng-mcp: a task record changed (notifications/tasks)', metadata: internal },
    );
    this.deps.client.registerTrigger({ type: 'state', function_id: changed, config: { scope: TASK_SCOPE } });
  }

  private async read(taskId: string): Promise<TaskRecord | undefined> {
    const value = await this.deps.client.trigger<unknown>({ function_id: 'state::get', payload: { scope: TASK_SCOPE, key: taskId } });
    return isObject(value) && typeof value.taskId === 'string' ? (value as unknown as TaskRecord) : undefined;
  }

  private async save(record: TaskRecord): Promise<void> {
    await this.deps.client.trigger({ function_id: 'state::set', payload: { scope: TASK_SCOPE, key: record.taskId, value: record } });
  }

  /** Ordered writes of one running task's record. */
  private update(run: Running, change: Partial<TaskRecord>): void {
    if (run.cancelled && change.status !== 'cancelled') return;
    Object.assign(run.record, change, { lastUpdatedAt: new Date().toISOString() });
    if (change.status && change.status !== 'input_required') delete run.record.inputRequests;
    const snapshot = { ...run.record };
    run.chain = run.chain
      .then(() => this.save(snapshot))
      .catch((err) => this.deps.log.warn(`cannot store task ${snapshot.taskId}: ${(err as Error).message}`));
  }

  /** A call becomes a task: stored first, then handed back as CreateTaskResult while the function runs on. */
  async adopt(call: ModernCall, work: Promise<Record<string, unknown>>, what: string): Promise<Record<string, unknown>> {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: TASK_TTL_MS,
      pollIntervalMs: TASK_POLL_MS,
      owner: this.deps.instance,
      what,
    };
    await this.save(record);
    const run: Running = { call, record, cancelled: false, chain: Promise.resolve() };
    this.running.set(record.taskId, run);
    const io: ModernIo = {
      transport: call.io.transport,
      leg: NEVER_CANCELLED,
      // a function reports its status with progress_function's `message`
      notify: (message: JSONRPCNotification) => {
        const text = (message.params as { message?: unknown } | undefined)?.message;
        if (message.method === 'notifications/progress' && typeof text === 'string') this.update(run, { statusMessage: text });
      },
    };
    call.link(io);
    call.inTask = true;
    call.wake = () => {
      if (run.timer) return;
      run.timer = setTimeout(() => {
        run.timer = undefined;
        if (call.inputs.size) this.update(run, { status: 'input_required', inputRequests: call.inputRequests() });
      }, GATHER_MS);
    };
    if (call.inputs.size) call.wake();
    void work.then(
      (result) => this.finish(run, { status: 'completed', result }),
      (err) => {
        const { code, message, data } = refusalOf(err);
        this.finish(run, { status: 'failed', error: data === undefined ? { code, message } : { code, message, data } });
      },
    );
    return { resultType: 'task', ...publicOf(record), _meta: { [META.serverInfo]: SERVER_INFO } };
  }

  private finish(run: Running, change: Partial<TaskRecord>): void {
    clearTimeout(run.timer);
    run.call.wake = undefined;
    this.update(run, change);
    void run.chain.then(() => this.running.delete(run.record.taskId));
  }

  private async found(taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== 'string' || taskId === '')
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: taskId must be a non-empty string');
    const record = await this.read(taskId);
    if (!record) throw new RpcError(ErrorCode.InvalidParams, `Invalid params: no task ${taskId} (unknown or expired)`);
    if (Date.parse(record.createdAt) + record.ttlMs < Date.now()) {
      await this.deps.client.trigger({ function_id: 'state::delete', payload: { scope: TASK_SCOPE, key: taskId } }).catch(() => undefined);
      throw new RpcError(ErrorCode.InvalidParams, `Invalid params: no task ${taskId} (unknown or expired)`);
    }
    return record;
  }

  /** `tasks/get`: the record as the engine holds it (this instance's own running ones are fresher). */
  async get(taskId: unknown): Promise<Record<string, unknown>> {
    const local = typeof taskId === 'string' ? this.running.get(taskId) : undefined;
    let record = local ? local.record : await this.found(taskId);
    if (!local && !TERMINAL.has(record.status) && !(await this.ownerAlive(record.owner))) {
      record = {
        ...record,
        status: 'failed',
        lastUpdatedAt: new Date().toISOString(),
        error: { code: ErrorCode.InternalError, message: 'the eng-mcp instance that ran this task stopped before it finished' },
      };
      delete record.inputRequests;
      await this.save(record);
    }
    return { resultType: 'complete', ...publicOf(record), _meta: { [META.serverInfo]: SERVER_INFO } };
  }

  private async ownerAlive(owner: string): Promise<boolean> {
    if (owner === this.deps.instance) return false; // not in `running`: this process never ran it
    try {
      return (await this.deps.view.functionInfo(this.fn(owner, 'task_update'))) !== null;
    } catch {
      return true; // cannot tell: do not fail a task on a hiccup
    }
  }

  /** `tasks/update`: answers for the task's pending input requests (unknown keys are ignored). */
  async update_(taskId: unknown, responses: unknown): Promise<Record<string, unknown>> {
    if (responses !== undefined && !isObject(responses)) {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: inputResponses must be an object keyed by the inputRequests keys');
    }
    const record = await this.found(taskId);
    if (!TERMINAL.has(record.status) && responses) {
      if (record.owner === this.deps.instance) this.answerHere(record.taskId, responses);
      else
        await this.deps.client.trigger({
          function_id: this.fn(record.owner, 'task_update'),
          payload: { taskId: record.taskId, responses },
        });
    }
    return { resultType: 'complete', _meta: { [META.serverInfo]: SERVER_INFO } };
  }

  private answerHere(taskId: string, responses: Record<string, unknown>): void {
    const run = this.running.get(taskId);
    if (!run) return;
    run.call.answer(responses);
    if (run.call.inputs.size) this.update(run, { status: 'input_required', inputRequests: run.call.inputRequests() });
    else this.update(run, { status: 'working' });
  }

  /** `tasks/cancel`: acknowledged at once; the function's invocation is cancelled (cooperative). */
  async cancel(taskId: unknown): Promise<Record<string, unknown>> {
    const record = await this.found(taskId);
    if (!TERMINAL.has(record.status)) {
      if (record.owner === this.deps.instance) this.cancelHere(record.taskId);
      else {
        await this.save({ ...record, status: 'cancelled', lastUpdatedAt: new Date().toISOString(), inputRequests: undefined });
        await this.deps.client
          .trigger({ function_id: this.fn(record.owner, 'task_cancel'), payload: { taskId: record.taskId } })
          .catch(() => undefined);
      }
    }
    return { resultType: 'complete', _meta: { [META.serverInfo]: SERVER_INFO } };
  }

  private cancelHere(taskId: string): void {
    const run = this.running.get(taskId);
    if (!run || run.cancelled) return;
    this.update(run, { status: 'cancelled', statusMessage: 'cancelled by the client' });
    run.cancelled = true;
    run.call.abort.abort();
  }

  close(): void {
    for (const run of this.running.values()) {
      clearTimeout(run.timer);
      run.call.abort.abort();
    }
  }
}
