import { AsyncLocalStorage } from 'node:async_hooks';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import { fireBinding } from '../state/fire.ts';
import { parseTriggerConfig } from '../state/schemas.ts';
import { JoinLeaveTriggerConfig, StreamTriggerConfig } from './schemas.ts';

export type StreamEventBody =
  | { type: 'create' | 'update' | 'delete' | 'sync'; data: unknown }
  | { type: 'event'; event: { type: string; data: unknown } }
  | { type: 'unauthorized' };

/**
 * spec §5.7 / §6.2: what `stream` triggers receive and what socket subscribers are sent — the
 * same camelCase wrapper. `id` is absent for group-level messages.
 */
export interface StreamMessage {
  type: 'stream';
  timestamp: number;
  streamName: string;
  groupId: string;
  id?: string;
  event: StreamEventBody;
}

export function streamMessage(streamName: string, groupId: string, id: string | undefined, event: StreamEventBody): StreamMessage {
  const message: StreamMessage = { type: 'stream', timestamp: Date.now(), streamName, groupId, event };
  if (id !== undefined) message.id = id;
  return message;
}

/** spec §5.7: `stream:join` / `stream:leave` payload (snake_case, unlike the `stream` wrapper). */
export interface JoinLeaveEvent {
  subscription_id: string;
  stream_name: string;
  group_id: string;
  id?: string;
  context?: unknown;
}

/**
 * The trace context of the stream call being served: a change it causes fires `stream` bindings
 * within the writer's trace (one request, one trace). Kept beside the message, never in it, since
 * the message is what handlers and sockets receive.
 */
export const streamCallTrace = new AsyncLocalStorage<{ traceparent?: string }>();

/** How long a join handler may take to authorise before the join is refused. */
const JOIN_TIMEOUT_MS = 10_000;

/** The `stream`, `stream:join` and `stream:leave` trigger types. */
export class StreamTriggers {
  private readonly changes = new Map<string, { binding: TriggerBinding; config: StreamTriggerConfig }>();
  private readonly joins = new Map<string, TriggerBinding>();
  private readonly leaves = new Map<string, TriggerBinding>();

  constructor(private readonly ctx: ModuleContext<unknown>) {}

  register(binding: TriggerBinding): void {
    if (binding.triggerType === 'stream') {
      this.changes.set(binding.id, { binding, config: parseTriggerConfig('stream', StreamTriggerConfig, binding.config) });
      return;
    }
    parseTriggerConfig(binding.triggerType, JoinLeaveTriggerConfig, binding.config);
    (binding.triggerType === 'stream:join' ? this.joins : this.leaves).set(binding.id, binding);
  }

  unregister(binding: TriggerBinding): void {
    this.changes.delete(binding.id);
    this.joins.delete(binding.id);
    this.leaves.delete(binding.id);
  }

  /** Fire `stream` bindings whose stream (and group, item when set) match; results are ignored. */
  dispatch(message: StreamMessage): void {
    for (const { binding, config } of this.changes.values()) {
      if (config.stream_name !== message.streamName) continue;
      if (config.group_id !== undefined && config.group_id !== message.groupId) continue;
      if (config.item_id !== undefined && config.item_id !== message.id) continue;
      const trace = streamCallTrace.getStore();
      void fireBinding(this.ctx, binding, message, undefined, trace?.traceparent ? { traceparent: trace.traceparent } : undefined);
    }
  }

  /**
   * Ask every `stream:join` binding (spec §5.7: no stream filter). `{unauthorized: true}` from any
   * of them refuses the join; so does a handler that fails or times out, because a join handler
   * is where authorisation lives and failing open would let anyone in.
   */
  async authorizeJoin(event: JoinLeaveEvent): Promise<boolean> {
    const verdicts = await Promise.all(
      [...this.joins.values()].map(async (binding) => {
        const fired = await fireBinding(this.ctx, binding, event, JOIN_TIMEOUT_MS);
        if (!fired.fired) return fired.reason !== 'condition_failed';
        if (!fired.outcome.ok) return false;
        const result = fired.outcome.result as { unauthorized?: unknown } | null | undefined;
        return !(result && typeof result === 'object' && result.unauthorized === true);
      }),
    );
    return verdicts.every(Boolean);
  }

  leave(event: JoinLeaveEvent): void {
    for (const binding of this.leaves.values()) void fireBinding(this.ctx, binding, event);
  }
}
