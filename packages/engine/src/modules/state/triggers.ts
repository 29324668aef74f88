import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
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

  register(binding: TriggerBinding): void {
    const config = parseTriggerConfig('state', StateTriggerConfig, binding.config);
    this.bindings.set(binding.id, { binding, config });
  }

  unregister(binding: TriggerBinding): void {
    this.bindings.delete(binding.id);
  }

  /** Fire every matching binding; handlers run in the background (their results are ignored, §5.1). */
  dispatch(event: StateEvent): void {
    if (!this.enabled) return;
    for (const { binding, config } of this.bindings.values()) {
      if (config.scope !== undefined && config.scope !== event.scope) continue;
      if (config.key !== undefined && config.key !== event.key) continue;
      void fireBinding(this.ctx, binding, event);
    }
  }
}
