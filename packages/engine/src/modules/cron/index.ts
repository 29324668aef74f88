import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import type { EngineModule } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import { RedisAdapterSchema } from '../../stores/redis-adapter.ts';
import { RedisTickLock } from './redis-lock.ts';
import { CronExpressionError, CronSchedule, rfc3339 } from './schedule.ts';
import { CronScheduler, type TickLock } from './scheduler.ts';

// spec: engine-protocol §5.3 (`cron` trigger), §7.2 (`iii-cron` adapters: kv | redis).

export const CronConfig = z
  .object({
    adapter: z
      .discriminatedUnion('name', [
        z.object({ name: z.literal('kv'), config: z.record(z.string(), z.unknown()).optional() }).strict(),
        RedisAdapterSchema,
      ])
      .default({ name: 'kv' }),
  })
  .strict();
export type CronConfig = z.infer<typeof CronConfig>;

const CronTriggerConfig = z.object({
  expression: z.unknown().optional(),
  condition_function_id: z.string().min(1).nullish(),
});

const TriggerNowInput = z.object({ trigger_id: z.string().min(1) });
const NextRunsInput = z
  .object({
    expression: z.string().min(1).optional(),
    trigger_id: z.string().min(1).optional(),
    count: z.number().int().min(1).max(100).default(5),
  })
  .refine((v) => v.expression !== undefined || v.trigger_id !== undefined, { message: 'expression or trigger_id is required' });

export const CronFunction = {
  TriggerNow: 'eng::cron::trigger_now',
  NextRuns: 'eng::cron::next_runs',
} as const;

function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, describeZodError(parsed.error));
  return parsed.data;
}

/** `eng-cron` (iii: `iii-cron`): bindings that fire on a schedule. See README.md. */
export function cronModule(): EngineModule<CronConfig> {
  let scheduler: CronScheduler | undefined;
  let lock: TickLock | null = null;
  return {
    name: 'eng-cron',
    aliases: ['iii-cron'],
    description: 'cron triggers: fire functions on a schedule',
    configSchema: CronConfig,
    async start(ctx) {
      if (ctx.config.adapter.name === 'redis') lock = await RedisTickLock.open(ctx.config.adapter.config.redis_url, ctx.log);
      const jobs = new CronScheduler(ctx, lock);
      scheduler = jobs;

      ctx.registerTriggerType(
        {
          id: 'cron',
          description: 'Cron schedule trigger',
          trigger_request_format: {
            type: 'object',
            required: ['expression'],
            properties: {
              expression: { type: 'string', description: '6 or 7 fields, seconds first; day-of-week 1-7 with 1 = Sunday; UTC' },
              condition_function_id: { type: 'string' },
            },
          },
          call_request_format: {
            type: 'object',
            properties: {
              trigger: { const: 'cron' },
              job_id: { type: 'string' },
              scheduled_time: { type: 'string', format: 'date-time' },
              actual_time: { type: 'string', format: 'date-time' },
              manual: { type: 'boolean' },
            },
          },
        },
        {
          register(binding: TriggerBinding) {
            const parsed = CronTriggerConfig.safeParse(binding.config ?? {});
            if (!parsed.success) throw new Error(`invalid cron trigger config: ${describeZodError(parsed.error)}`);
            const schedule = CronSchedule.parse(parsed.data.expression);
            jobs.add(binding, schedule, parsed.data.condition_function_id ?? undefined);
          },
          unregister(binding: TriggerBinding) {
            jobs.remove(binding.id);
          },
        },
      );

      ctx.registerFunction(
        {
          id: CronFunction.TriggerNow,
          description: 'Fire a cron trigger now, outside its schedule (payload has manual: true)',
          request_format: { type: 'object', required: ['trigger_id'], properties: { trigger_id: { type: 'string' } } },
          metadata: { internal: true },
        },
        (input) => {
          const { trigger_id } = parseInput(TriggerNowInput, input);
          const payload = jobs.fireNow(trigger_id);
          if (!payload) throw new EngError(ErrorCode.NotFound, `cron trigger ${trigger_id} not found`);
          return { ...payload, function_id: jobs.get(trigger_id)?.binding.functionId };
        },
      );

      ctx.registerFunction(
        {
          id: CronFunction.NextRuns,
          description: 'The next fire times of a cron expression or of a cron trigger',
          request_format: {
            type: 'object',
            properties: {
              expression: { type: 'string' },
              trigger_id: { type: 'string' },
              count: { type: 'integer', minimum: 1, maximum: 100 },
            },
          },
          metadata: { internal: true },
        },
        (input) => {
          const { expression, trigger_id, count } = parseInput(NextRunsInput, input);
          let schedule: CronSchedule;
          if (trigger_id !== undefined) {
            const job = jobs.get(trigger_id);
            if (!job) throw new EngError(ErrorCode.NotFound, `cron trigger ${trigger_id} not found`);
            schedule = job.schedule;
          } else {
            try {
              schedule = CronSchedule.parse(expression);
            } catch (err) {
              if (err instanceof CronExpressionError) throw new EngError(ErrorCode.InvalidArguments, err.message);
              throw err;
            }
          }
          return { expression: schedule.expression, next_runs: schedule.nextRuns(count).map(rfc3339) };
        },
      );
    },
    async stop() {
      scheduler?.stop();
      await lock?.close();
    },
  };
}
