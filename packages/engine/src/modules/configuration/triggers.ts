import { z } from 'zod';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import { fireBinding } from '../state/fire.ts';
import { parseTriggerConfig } from '../state/schemas.ts';
import type { ConfigEvent } from './service.ts';

// The `configuration` trigger type: fires after every register (that changes something), set and
// delete, so a worker reloads its settings without polling.

const EventType = z.enum(['configuration:registered', 'configuration:updated', 'configuration:deleted'], {
  error: 'event_types must hold configuration:registered, configuration:updated or configuration:deleted',
});

export const ConfigurationTriggerConfig = z.strictObject({
  configuration_id: z.string({ error: 'configuration_id must be a string' }).min(1).optional(),
  /** Short alias of configuration_id. */
  id: z.string({ error: 'id must be a string' }).min(1).optional(),
  event_types: z.array(EventType, { error: 'event_types must be an array' }).optional(),
  condition_function_id: z.string({ error: 'condition_function_id must be a string' }).min(1).optional(),
});
type Filter = z.infer<typeof ConfigurationTriggerConfig>;

export class ConfigurationTriggers {
  private readonly bindings = new Map<string, { binding: TriggerBinding; filter: Filter }>();

  constructor(private readonly ctx: ModuleContext<unknown>) {}

  register(binding: TriggerBinding): void {
    const filter = parseTriggerConfig('configuration', ConfigurationTriggerConfig, binding.config);
    if (filter.id && filter.configuration_id && filter.id !== filter.configuration_id)
      throw new Error('invalid configuration trigger config: id and configuration_id name different entries');
    this.bindings.set(binding.id, { binding, filter });
  }

  unregister(binding: TriggerBinding): void {
    this.bindings.delete(binding.id);
  }

  dispatch(event: ConfigEvent): void {
    for (const { binding, filter } of this.bindings.values()) {
      const id = filter.configuration_id ?? filter.id;
      if (id !== undefined && id !== event.id) continue;
      if (filter.event_types && !filter.event_types.includes(event.event_type)) continue;
      void fireBinding(this.ctx, binding, event, undefined, {
        span: { attributes: { 'eng.trigger.type': 'configuration', 'eng.trigger.id': binding.id } },
      });
    }
  }
}
