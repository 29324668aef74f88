import type { ErrorBody } from '@eng/protocol';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { EngineTracer } from '../observability/tracer.ts';
import { fireBinding } from './fire.ts';
import { parseTriggerConfig, StateTriggerConfig } from './schemas.ts';

/** spec §5.6: the payload a `state` trigger receives. */
export interface StateEvent {
  type: 'state';
  event_type: 'state:created' | 'state:updated' | 'state:deleted';
  scope: string;
  key: string;
  old_value: unknown;
  new_value: unknown;
}

export function stateEvent(scope: string, key: string, old: unknown | undefined, next: unknown | undefined): StateEvent {
  const event_type = next === undefined ? 'state:deleted' : old === undefined || old === null ? 'state:created' : 'state:updated';
  return { type: 'state', event_type, scope, key, old_value: old ?? null, new_value: next ?? null };
}

/** The `state` trigger type: bindings filtered by exact scope and key (an absent filter matches anything). */
export class StateTriggers {
  private readonly bindings = new Map<string, { binding: TriggerBinding; config: StateTriggerConfig }>();

  constructor(
    private readonly ctx: ModuleContext<unknown>,
    private readonly enabled: boolean,
  ) {}

  /** Whether a write now could fire anything (else the write builds no event). */
  get active(): boolean {
    return this.enabled && this.bindings.size > 0;
  }

  register(binding: TriggerBinding): void {
    const config = parseTriggerConfig('state', StateTriggerConfig, binding.config);
    this.bindings.set(binding.id, { binding, config });
  }

  unregister(binding: TriggerBinding): void {
    this.bindings.delete(binding.id);
  }

  /**
   * Fire every matching binding; handlers run in the background (their results are ignored, §5.1).
   * spec §8.1 `state_triggers`: when any binding matches, one span covers the event's firings, a
   * child of the write's context (`traceparent`, the `state::*` call's) or a new trace; each
   * handler's `call` span (and condition call) hangs under it. It ends when every handler has.
   */
  dispatch(event: StateEvent, traceparent?: string): void {
    if (!this.enabled) return;
    const matching: TriggerBinding[] = [];
    for (const { binding, config } of this.bindings.values()) {
      if (config.scope !== undefined && config.scope !== event.scope) continue;
      if (config.key !== undefined && config.key !== event.key) continue;
      matching.push(binding);
    }
    if (matching.length === 0) return;
    const span = this.ctx.services.get<EngineTracer>('observability.tracer')?.startSpan('state_triggers', {
      traceparent,
      kind: 'internal',
      attributes: {
        'eng.trigger.type': 'state',
        'eng.state.scope': event.scope,
        'eng.state.key': event.key,
        'eng.state.event_type': event.event_type,
        'eng.trigger.count': matching.length,
        'eng.trigger.ids': matching.map((b) => b.id).join(','),
      },
    });
    const fired = matching.map((binding) =>
      fireBinding(this.ctx, binding, event, undefined, {
        traceparent: span?.traceparent ?? traceparent,
        span: { attributes: { 'eng.trigger.type': 'state', 'eng.trigger.id': binding.id } },
      }),
    );
    if (!span?.sampled) return;
    void Promise.all(fired).then((outcomes) => {
      let failed = 0;
      let firstError: ErrorBody | undefined;
      for (const o of outcomes) {
        if (o.fired ? o.outcome.ok : o.reason !== 'condition_failed') continue;
        failed++;
        firstError ??= o.fired && !o.outcome.ok ? o.outcome.error : { code: 'condition_failed', message: 'a condition function failed' };
      }
      span.end(failed ? { error: firstError, attributes: { 'eng.trigger.failed': failed } } : undefined);
    });
  }
}
