import type { EngClient, WorkerSpan } from '@eng/sdk';
import type { AgentMessage, ContentBlock } from '../router/types.ts';
import type { EventTypes } from '../shared/event-types.ts';
import { appendResult, type CallScope, deniedResult, execute, resultMessage, screen } from './calls.ts';
import { HarnessEvent, type TurnCompletedEvent } from './events.ts';
import { type FunctionCall, Generation, type GenerationOutcome } from './generation.ts';
import { FunctionPolicy } from './policy.ts';
import { StepInputs } from './step-input.ts';
import type { TurnStore } from './store.ts';
import type { PendingCall, QueuedMessage, TurnRecord } from './types.ts';

// spec: console-worker §2.3 — the durable turn loop: generate, run the model's function calls
// (through the policy and the approval gate), repeat until the model answers without calls.
// Every transition is written to the turn record first, so a restarted harness knows where it was.

export interface TurnDeps {
  client: EngClient;
  store: TurnStore;
  events: EventTypes;
  onFinished(turn: Turn): void;
  /**
   * A turn the user stopped while messages waited behind it: they were sent after the stopped
   * request, so a new turn answers them (the stop ends the running work, not what came after it).
   */
  onQueuedAfterStop?(turn: Turn, queued: QueuedMessage[]): Promise<() => void>;
}

type Final = Omit<TurnCompletedEvent, 'session_id' | 'turn_id' | 'timestamp' | 'terminal'>;
/** What a denied (`deliver`) resolution answers in the call's place. */
type ResolvedContent = { content: unknown; is_error?: boolean; details?: unknown };

export class Turn {
  /** The request's allow/deny lists plus the approval-gate entry's deny rules (re-read per step). */
  private policy: FunctionPolicy;
  private readonly span: WorkerSpan;
  private generation?: Generation;
  private aborted = false;
  /** A generation is streaming: new messages wait in the queue. */
  private streaming = false;
  /** The loop decided to finish: a new message starts a new turn. */
  private finishing = false;
  /** Messages appended while the turn ran between steps: one more step answers them. */
  private mergedSinceStep = false;
  private wake?: () => void;
  /** Calls the gate is being asked about right now (its answer is on the way). */
  private readonly screening = new Set<string>();
  /**
   * Decisions that reached the turn before the gate's own `hold` answer did (a person, or a bot,
   * deciding within the moment the answer travels back): applied as soon as the call is held.
   */
  private readonly early = new Map<string, { action: 'execute' | 'deliver'; delivered?: ResolvedContent }>();
  private readonly inputs: StepInputs;
  /** The `working` status write, started with the turn and not waited for (the step needs none of it). */
  private statusWrite: Promise<void> = Promise.resolve();
  /** Set when the harness itself stops the turn (shutdown): it fails instead of being cancelled. */
  private interruptedBy?: string;
  private settled!: (record: TurnRecord) => void;
  readonly done = new Promise<TurnRecord>((resolve) => {
    this.settled = resolve;
  });

  constructor(
    private readonly deps: TurnDeps,
    readonly record: TurnRecord,
    parentTraceparent?: string,
    /** The user message the turn answers, while its append may still be in flight (it overlaps the first step's reads). */
    private readonly opening?: { entry_id: string; message: AgentMessage; appended: Promise<unknown> },
  ) {
    this.policy = new FunctionPolicy(record.options.functions ?? {});
    this.span = deps.client.startSpan('harness turn', { parent: record.traceparent ?? parentTraceparent });
    this.span.setAttribute('eng.session.id', record.session_id).setAttribute('eng.turn.id', record.turn_id);
    this.span
      .setAttribute('eng.message.id', record.user_entry_id)
      .setAttribute('gen_ai.request.model', `${record.provider}::${record.model}`);
    record.traceparent ??= this.span.traceparent;
    this.inputs = new StepInputs(deps.client, record, this.span);
  }

  get sessionId(): string {
    return this.record.session_id;
  }

  get turnId(): string {
    return this.record.turn_id;
  }

  /** Whether a message sent now can go straight into the transcript (the next step sees it). */
  get acceptsMerge(): boolean {
    return !this.finishing && !this.streaming && !this.aborted && this.record.pending_function_calls.length === 0;
  }

  get open(): boolean {
    return !this.finishing;
  }

  /** Start the loop (a resumed turn picks up its held calls first). */
  start(resumed = false): void {
    void this.run(resumed);
  }

  merged(): void {
    this.mergedSinceStep = true;
  }

  async enqueue(queued: QueuedMessage): Promise<void> {
    this.record.queued.push(queued);
    await this.deps.store.save(this.record);
    this.deps.events.emit(HarnessEvent.MessageQueued, {
      session_id: this.sessionId,
      turn_id: this.turnId,
      entry_id: queued.entry_id,
      timestamp: Date.now(),
    });
  }

  async unqueue(entryId: string): Promise<boolean> {
    const before = this.record.queued.length;
    this.record.queued = this.record.queued.filter((q) => q.entry_id !== entryId);
    if (this.record.queued.length === before) return false;
    await this.deps.store.save(this.record);
    return true;
  }

  async editQueued(entryId: string, content: ContentBlock[]): Promise<boolean> {
    const queued = this.record.queued.find((q) => q.entry_id === entryId);
    if (!queued) return false;
    queued.message = { ...queued.message, content };
    await this.deps.store.save(this.record);
    return true;
  }

  abort(): boolean {
    if (this.finishing || this.aborted) return false;
    this.aborted = true;
    this.generation?.abort();
    this.wake?.();
    return true;
  }

  /** The harness is shutting down: end the turn as failed (not cancelled: nobody asked to stop). */
  interrupt(reason: string): Promise<TurnRecord> {
    this.interruptedBy = reason;
    this.abort();
    return this.done;
  }

  /** `harness::function::resolve`: run (allow) or answer (deny) a held call. */
  resolveCall(callId: string, action: 'execute' | 'deliver', delivered?: ResolvedContent) {
    const pending = this.record.pending_function_calls.find((c) => c.function_call_id === callId && c.state === 'held');
    if (!pending && !this.aborted && this.screening.has(callId) && !this.early.has(callId)) {
      // the gate held the call and it was decided before the gate's answer reached this turn:
      // kept, and applied when the answer comes (losing it would leave the turn waiting for ever)
      this.early.set(callId, { action, delivered });
      return { resolved: true, turn_resumed: false };
    }
    if (!pending || this.aborted) return { resolved: false };
    pending.state = 'running';
    const resumes = this.record.pending_function_calls.every((c) => c === pending || c.state !== 'held');
    void this.complete(pending, action, delivered);
    return { resolved: true, turn_resumed: resumes };
  }

  private async complete(pending: PendingCall, action: 'execute' | 'deliver', delivered?: ResolvedContent) {
    const call = { id: pending.function_call_id, function_id: pending.function_id, arguments: pending.arguments };
    try {
      await this.deps.store.save(this.record);
      const message =
        action === 'execute'
          ? await execute(this.scope(pending.step), call)
          : resultMessage(call, deliveredText(delivered?.content), delivered?.is_error ?? true, delivered?.details);
      await appendResult({ ...this.scope(pending.step) }, message);
    } catch (err) {
      await appendResult(this.scope(pending.step), resultMessage(call, `Error: ${(err as Error).message}`, true)).catch(() => undefined);
    }
    this.record.pending_function_calls = this.record.pending_function_calls.filter((c) => c !== pending);
    await this.deps.store.save(this.record).catch(() => undefined);
    if (this.record.pending_function_calls.length === 0) this.wake?.();
  }

  private scope(step = this.record.step): CallScope & { step: number } {
    return {
      client: this.deps.client,
      sessionId: this.sessionId,
      turnId: this.turnId,
      step,
      metadata: this.record.options.metadata,
      span: this.span,
    };
  }

  private async run(resumed: boolean): Promise<void> {
    let final: Final = { status: 'completed' };
    try {
      if (!resumed) {
        this.statusWrite = this.setSessionStatus('working');
        this.deps.events.emit(HarnessEvent.TurnStarted, { session_id: this.sessionId, turn_id: this.turnId, timestamp: Date.now() });
      }
      if (this.record.pending_function_calls.length) await this.awaitCalls();
      let answer = '';
      for (;;) {
        if (this.aborted) {
          final = { status: 'cancelled', reason: 'stopped' };
          break;
        }
        await this.drainQueue();
        if (this.record.step >= this.record.max_turns) {
          final = { status: 'completed', result: answer, reason: `max_turns (${this.record.max_turns}) reached` };
          break;
        }
        const outcome = await this.step();
        if (this.aborted || outcome.stop_reason === 'aborted') {
          final = { status: 'cancelled', reason: 'stopped' };
          break;
        }
        if (outcome.stop_reason === 'error') {
          final = { status: 'failed', result_error: outcome.error_message ?? 'the generation failed', reason: outcome.error_kind };
          break;
        }
        answer = textOf(outcome);
        if (outcome.calls.length === 0) {
          if (this.record.queued.length || this.mergedSinceStep) continue;
          final = { status: 'completed', result: answer };
          break;
        }
        await this.handleCalls(outcome.calls);
        await this.awaitCalls();
      }
    } catch (err) {
      final = { status: 'failed', result_error: (err as Error).message ?? String(err) };
    }
    if (this.interruptedBy) final = { status: 'failed', result_error: this.interruptedBy, reason: 'interrupted' };
    await this.finish(final);
  }

  /** One generation: context (compacted when it would overflow), then the streamed answer. */
  private async step(): Promise<GenerationOutcome> {
    const r = this.record;
    r.step++;
    r.status = 'running';
    r.assistant_entry_id = `e_${r.turn_id}_${r.step}`;
    this.mergedSinceStep = false;
    // the stream's channel is made while the step's input is fetched
    const channel = this.deps.client.createChannel(1024);
    channel.catch(() => undefined);
    const opening = r.step === 1 ? this.opening : undefined;
    const input = await this.inputs.prepare(opening, this.deps.store.save(r));
    this.policy = input.policy;
    const span = this.deps.client.startSpan('generation', { parent: this.span.traceparent });
    span.setAttribute('eng.session.id', this.sessionId).setAttribute('eng.turn.id', this.turnId).setAttribute('eng.step', r.step);
    span.setAttribute('gen_ai.request.model', r.model).setAttribute('gen_ai.system', r.provider);
    const generation = new Generation(
      this.deps.client,
      {
        sessionId: this.sessionId,
        turnId: this.turnId,
        step: r.step,
        entryId: r.assistant_entry_id,
        model: r.model,
        provider: r.provider,
        messages: input.messages,
        system: input.system,
        tools: input.tools,
        thinking_level: r.options.thinking_level,
        provider_options: r.options.provider_options,
      },
      span,
      channel,
      opening?.appended,
    );
    this.generation = generation;
    this.streaming = true;
    try {
      if (this.aborted) generation.abort();
      const outcome = await this.deps.client.withSpan(span, () => generation.run());
      span.end(outcome.stop_reason === 'error' ? { error: new Error(outcome.error_message ?? 'generation failed') } : {});
      return outcome;
    } catch (err) {
      span.end({ error: err });
      throw err;
    } finally {
      this.streaming = false;
      this.generation = undefined;
      r.assistant_entry_id = undefined;
    }
  }

  /** Each call in order: denied ones get their reason, allowed ones run, held ones wait for a human. */
  private async handleCalls(calls: FunctionCall[]): Promise<void> {
    const scope = this.scope();
    for (const call of calls) {
      if (this.aborted) {
        await appendResult(scope, deniedResult(call, 'the turn was stopped before this call ran'));
        continue;
      }
      this.screening.add(call.id);
      let decision: Awaited<ReturnType<typeof screen>>;
      try {
        decision = await screen(scope, call, this.policy);
      } finally {
        this.screening.delete(call.id);
      }
      // a turn stopped meanwhile runs nothing: the call is held, and awaitCalls answers it as denied
      const early = this.aborted ? undefined : this.early.get(call.id);
      this.early.delete(call.id);
      if (decision.decision === 'deny') await appendResult(scope, deniedResult(call, decision.reason));
      else if (decision.decision === 'continue') await appendResult(scope, await execute(scope, call));
      else {
        const pending: PendingCall = {
          function_call_id: call.id,
          function_id: call.function_id,
          arguments: call.arguments,
          step: scope.step,
          state: early ? 'running' : 'held',
        };
        this.record.pending_function_calls.push(pending);
        if (early) void this.complete(pending, early.action, early.delivered);
      }
    }
  }

  /** Wait until every held call is resolved (or the turn is stopped: they end as denied). */
  private async awaitCalls(): Promise<void> {
    if (this.record.pending_function_calls.length === 0) return;
    this.record.status = 'awaiting_functions';
    await this.deps.store.save(this.record);
    while (this.record.pending_function_calls.length > 0 && !this.aborted) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    if (this.aborted) {
      for (const pending of this.record.pending_function_calls.filter((c) => c.state === 'held')) {
        const call = { id: pending.function_call_id, function_id: pending.function_id };
        await appendResult(this.scope(pending.step), deniedResult(call, 'the turn was stopped while this call waited for approval')).catch(
          () => undefined,
        );
      }
      this.record.pending_function_calls = [];
    }
    this.record.status = 'running';
  }

  /** Queued messages join the transcript (in order) before the next step. */
  private async drainQueue(): Promise<void> {
    while (this.record.queued.length) {
      const queued = this.record.queued[0] as QueuedMessage;
      await this.deps.client.call(
        'session::append',
        { session_id: this.sessionId, entry_id: queued.entry_id, origin: { turn_id: this.turnId, queued: true }, message: queued.message },
        { timeoutMs: 15_000 },
      );
      this.record.queued.shift();
      this.mergedSinceStep = true;
    }
  }

  private async finish(final: Final): Promise<void> {
    this.finishing = true;
    const r = this.record;
    // nothing the user sent is dropped: after a stop they start a new turn; otherwise (a failure,
    // the harness shutting down) they join the transcript here
    // (the new turn's record, holding them, is stored before this one drops them: a crash in
    // between finds them in a running record and recovery answers them)
    let startAfterStop: (() => void) | undefined;
    if (final.status === 'cancelled' && !this.interruptedBy && r.queued.length && this.deps.onQueuedAfterStop) {
      startAfterStop = await this.deps.onQueuedAfterStop(this, r.queued).catch(() => undefined);
      if (startAfterStop) r.queued = [];
    }
    await this.drainQueue().catch(() => undefined);
    r.status = final.status;
    r.result = final.result;
    r.result_error = final.result_error;
    r.reason = final.reason;
    r.pending_function_calls = [];
    await this.deps.store.save(r).catch(() => undefined);
    await this.statusWrite;
    await this.setSessionStatus(final.status === 'failed' ? 'error' : 'idle', final.status === 'failed' ? final.result_error : undefined);
    const event: TurnCompletedEvent = { session_id: this.sessionId, turn_id: this.turnId, ...final, timestamp: Date.now(), terminal: true };
    this.deps.events.emit(HarnessEvent.TurnCompleted, stripUndefined(event));
    this.span.setAttribute('eng.turn.status', final.status).setAttribute('eng.turn.steps', r.step);
    this.span.end(final.status === 'failed' ? { error: new Error(final.result_error ?? 'turn failed') } : {});
    this.deps.onFinished(this);
    startAfterStop?.();
    this.settled(r);
  }

  private async setSessionStatus(status: 'working' | 'idle' | 'error', reason?: string): Promise<void> {
    await this.deps.client
      .call(
        'session::set-status',
        { session_id: this.sessionId, status, ...(reason ? { reason: reason.slice(0, 500) } : {}) },
        { timeoutMs: 15_000 },
      )
      .catch(() => undefined);
  }
}

function textOf(outcome: GenerationOutcome): string {
  return outcome.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('');
}

function deliveredText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content
      .filter((b) => b && typeof b === 'object' && (b as { type?: unknown }).type === 'text')
      .map((b) => String((b as { text?: unknown }).text ?? ''));
    if (texts.length) return texts.join('\n');
  }
  return content === undefined ? 'Denied.' : JSON.stringify(content);
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
