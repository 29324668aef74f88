import type { EngClient, TriggerBinding } from '@eng/sdk';
import { TriggerAction } from '@eng/sdk';

/**
 * A trigger type this worker provides and fires itself (spec: engine-protocol §5.11): it keeps the
 * bindings the engine hands it and invokes each bound function fire-and-forget, so a slow or
 * broken subscriber never holds up the writer. `accepts` filters by the binding's config.
 */
export class EventFanout<P> {
  private readonly bindings = new Map<string, TriggerBinding>();

  constructor(
    private readonly client: EngClient,
    readonly id: string,
    description: string,
    private readonly accepts: (config: unknown, payload: P) => boolean = () => true,
    validate: (config: unknown) => void = () => {},
  ) {
    client.registerTriggerType(
      { id, description },
      {
        registerTrigger: (binding) => {
          validate(binding.config);
          this.bindings.set(binding.id, binding);
        },
        unregisterTrigger: (binding) => {
          this.bindings.delete(binding.id);
        },
      },
    );
  }

  get subscriberCount(): number {
    return this.bindings.size;
  }

  emit(payload: P): void {
    for (const binding of this.bindings.values()) {
      let wanted: boolean;
      try {
        wanted = this.accepts(binding.config, payload);
      } catch {
        wanted = false;
      }
      if (!wanted) continue;
      this.client.trigger({ function_id: binding.function_id, payload, action: TriggerAction.Void() }).catch(() => {});
    }
  }
}

/** Binding configs of the router's events take no filters: anything but an empty object is refused. */
export function noFilters(triggerType: string): (config: unknown) => void {
  return (config) => {
    if (config === null || config === undefined) return;
    if (typeof config !== 'object' || Array.isArray(config) || Object.keys(config).length > 0) {
      throw new Error(`invalid ${triggerType} config: it takes no fields (got ${JSON.stringify(config)})`);
    }
  };
}
