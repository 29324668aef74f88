import type { TriggerStatus } from '@eng/protocol';

/** A binding of a function to a trigger type, as stored by the engine. */
export interface TriggerBinding {
  id: string;
  triggerType: string;
  functionId: string;
  config: unknown;
  metadata?: Record<string, unknown>;
  /** Worker that bound it; null for ownerless bindings (`engine::register_trigger`, config). */
  ownerWorkerId: string | null;
  /**
   * active: delivered to a live provider. inactive: parked until a provider of its type appears
   * (spec §5.1). error: the provider refused it; `error` says why. It is re-delivered with the
   * next provider of the type.
   */
  status: TriggerStatus;
  error?: string;
  createdAtMs: number;
}

/** The side that makes a trigger type fire: an engine module or a worker on the bus. */
export type TriggerProvider =
  | {
      kind: 'module';
      moduleName: string;
      /** Validate and start firing. Throw an Error with a readable message to refuse the binding. */
      register(binding: TriggerBinding): void | Promise<void>;
      unregister(binding: TriggerBinding): void | Promise<void>;
    }
  | { kind: 'worker'; workerId: string };

export interface TriggerTypeEntry {
  id: string;
  description: string | null;
  triggerRequestFormat?: unknown;
  callRequestFormat?: unknown;
  provider: TriggerProvider;
}

export class TriggerTypeRegistry {
  private readonly types = new Map<string, TriggerTypeEntry>();

  set(entry: TriggerTypeEntry): TriggerTypeEntry | undefined {
    const previous = this.types.get(entry.id);
    this.types.set(entry.id, entry);
    return previous;
  }
  get(id: string): TriggerTypeEntry | undefined {
    return this.types.get(id);
  }
  delete(id: string): void {
    this.types.delete(id);
  }
  all(): IterableIterator<TriggerTypeEntry> {
    return this.types.values();
  }
  providedBy(workerId: string): TriggerTypeEntry[] {
    return [...this.types.values()].filter((t) => t.provider.kind === 'worker' && t.provider.workerId === workerId);
  }
}

export class TriggerBindingRegistry {
  private readonly bindings = new Map<string, TriggerBinding>();
  version = 0;

  set(binding: TriggerBinding): void {
    this.bindings.set(binding.id, binding);
    this.version++;
  }
  get(id: string): TriggerBinding | undefined {
    return this.bindings.get(id);
  }
  delete(id: string): TriggerBinding | undefined {
    const binding = this.bindings.get(id);
    if (binding) {
      this.bindings.delete(id);
      this.version++;
    }
    return binding;
  }
  all(): IterableIterator<TriggerBinding> {
    return this.bindings.values();
  }
  ofType(triggerType: string): TriggerBinding[] {
    return [...this.bindings.values()].filter((b) => b.triggerType === triggerType);
  }
  ownedBy(workerId: string): TriggerBinding[] {
    return [...this.bindings.values()].filter((b) => b.ownerWorkerId === workerId);
  }
  countOfType(triggerType: string): number {
    let n = 0;
    for (const b of this.bindings.values()) if (b.triggerType === triggerType) n++;
    return n;
  }
}

/** `config_summary` of the 0.22.1 listing: the config as JSON, cut to 80 characters. */
export function summariseConfig(config: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(config ?? {}) ?? '{}';
  } catch {
    text = '{}';
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
