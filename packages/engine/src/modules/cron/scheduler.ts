import { evaluateCondition } from '../../core/condition.ts';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { EngineTracer } from '../observability/tracer.ts';
import { type CronSchedule, rfc3339 } from './schedule.ts';

// spec: engine-protocol §5.3 — one timer per cron binding. Each firing computes the next time
// from "now", so ticks missed while the engine was down (or the event loop was blocked) are not
// replayed.

/** Decides whether this engine fires a tick (the redis adapter lets one engine of several win). */
export interface TickLock {
  /** `tick` names one firing: function, expression and scheduled time. */
  acquire(tick: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface CronPayload {
  trigger: 'cron';
  job_id: string;
  scheduled_time: string;
  actual_time: string;
  manual?: true;
}

interface Job {
  binding: TriggerBinding;
  schedule: CronSchedule;
  conditionFunctionId?: string;
  timer?: NodeJS.Timeout;
  next?: Date;
}

/** setTimeout takes at most 2^31-1 ms; longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;

export class CronScheduler {
  private readonly jobs = new Map<string, Job>();
  private stopped = false;

  constructor(
    private readonly ctx: Pick<ModuleContext<unknown>, 'invoke' | 'log' | 'services'>,
    private readonly lock: TickLock | null,
  ) {}

  has(bindingId: string): boolean {
    return this.jobs.has(bindingId);
  }

  get(bindingId: string): { binding: TriggerBinding; schedule: CronSchedule } | undefined {
    return this.jobs.get(bindingId);
  }

  add(binding: TriggerBinding, schedule: CronSchedule, conditionFunctionId?: string): void {
    this.remove(binding.id);
    const job: Job = { binding, schedule, conditionFunctionId };
    this.jobs.set(binding.id, job);
    this.arm(job);
  }

  remove(bindingId: string): void {
    const job = this.jobs.get(bindingId);
    if (!job) return;
    clearTimeout(job.timer);
    this.jobs.delete(bindingId);
  }

  stop(): void {
    this.stopped = true;
    for (const job of this.jobs.values()) clearTimeout(job.timer);
    this.jobs.clear();
  }

  /** Fire a binding now, outside its schedule (the console's "Trigger Now"). */
  fireNow(bindingId: string): CronPayload | undefined {
    const job = this.jobs.get(bindingId);
    if (!job) return undefined;
    const now = new Date();
    const payload: CronPayload = {
      trigger: 'cron',
      job_id: job.binding.id,
      scheduled_time: rfc3339(now),
      actual_time: rfc3339(now),
      manual: true,
    };
    void this.dispatch(job, payload);
    return payload;
  }

  private arm(job: Job): void {
    if (this.stopped) return;
    const next = job.next && job.next.getTime() > Date.now() ? job.next : job.schedule.next(new Date());
    job.next = next ?? undefined;
    if (!next) return; // a 7-field expression whose last year has passed
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next.getTime() - Date.now()));
    job.timer = setTimeout(() => this.onTimer(job), delay);
    job.timer.unref();
  }

  private onTimer(job: Job): void {
    if (this.jobs.get(job.binding.id) !== job) return;
    const scheduled = job.next as Date;
    const now = Date.now();
    if (now < scheduled.getTime()) {
      this.arm(job); // early wake-up or a long wait re-armed in steps
      return;
    }
    job.next = undefined;
    this.arm(job);
    void this.fireScheduled(job, scheduled, new Date(now));
  }

  private async fireScheduled(job: Job, scheduled: Date, actual: Date): Promise<void> {
    // the same function on the same schedule is one job however many engines (or replicas) bound it
    const tick = `${job.binding.functionId}|${job.schedule.expression}|${scheduled.getTime()}`;
    if (this.lock && !(await this.lock.acquire(tick))) return;
    await this.dispatch(job, { trigger: 'cron', job_id: job.binding.id, scheduled_time: rfc3339(scheduled), actual_time: rfc3339(actual) });
  }

  private async dispatch(job: Job, payload: CronPayload): Promise<void> {
    const { binding } = job;
    const metadata = binding.metadata;
    // spec §8.1 `cron_trigger`: one span per firing, the root of the trace; the condition and the
    // handler's `call` span hang under it (the tracer is looked up per firing: modules start in any order).
    // Like an HTTP trigger's server span, it names the function it fires in `function_id`: the
    // trace list shows it beside the root and a root-span search by function finds the firing.
    const span = this.ctx.services.get<EngineTracer>('observability.tracer')?.startSpan('cron_trigger', {
      kind: 'internal',
      attributes: {
        function_id: binding.functionId,
        'eng.trigger.type': 'cron',
        'eng.trigger.id': binding.id,
        'eng.cron.job_id': binding.id,
        'eng.cron.expression': job.schedule.expression,
        'eng.cron.scheduled_time': payload.scheduled_time,
        'eng.cron.actual_time': payload.actual_time,
        'eng.cron.manual': payload.manual === true,
        'eng.trigger.function_id': binding.functionId,
      },
    });
    const traceparent = span?.traceparent;
    if (job.conditionFunctionId) {
      const verdict = await evaluateCondition(this.ctx.invoke, job.conditionFunctionId, payload, { metadata, traceparent });
      if (!verdict.pass) {
        if (verdict.error) {
          this.ctx.log.warn(
            `condition ${job.conditionFunctionId} of cron ${binding.id} failed: ${verdict.error.code}: ${verdict.error.message}`,
          );
        }
        span?.end({ error: verdict.error, attributes: { 'eng.trigger.skipped': verdict.error ? 'condition_failed' : 'condition_false' } });
        return;
      }
    }
    const outcome = await this.ctx.invoke(binding.functionId, payload, {
      metadata,
      traceparent,
      span: { attributes: { 'eng.trigger.type': 'cron', 'eng.trigger.id': binding.id } },
    });
    if (!outcome.ok) {
      this.ctx.log.warn(`cron ${binding.id} handler ${binding.functionId} failed: ${outcome.error.code}: ${outcome.error.message}`);
      span?.end({ error: outcome.error });
    } else {
      span?.end();
    }
  }
}
