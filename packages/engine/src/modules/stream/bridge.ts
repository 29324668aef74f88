import { randomUUID } from 'node:crypto';
import type { ModuleContext } from '../../core/module.ts';
import { type BridgeAdapterConfig, BridgeClient } from '../../stores/bridge.ts';
import { type StreamMessage, streamCallTrace } from './triggers.ts';

// spec: engine-protocol §4.5, §7.2 — `adapter: {name: bridge, config: {bridge_url}}` of iii-stream.

/** The pub/sub topic bridged engines share their stream events on (iii's name, so iii engines join in). */
export const STREAM_EVENTS_TOPIC = 'stream.events';

/** Calls `stream::<op>` on the other engine. */
export type RemoteStreams = (functionId: string, input: unknown) => Promise<unknown>;

export interface StreamBridge {
  bridge: BridgeClient;
  remote: RemoteStreams;
  /** Tell the other bridged engines about a change made through this one. */
  publish(message: StreamMessage): void;
}

function isStreamMessage(value: unknown): value is StreamMessage & { eng_origin?: string } {
  if (!value || typeof value !== 'object') return false;
  const m = value as Record<string, unknown>;
  return (
    m.type === 'stream' && typeof m.streamName === 'string' && typeof m.groupId === 'string' && !!m.event && typeof m.event === 'object'
  );
}

/**
 * Items live in the other engine (`stream::*` there answers every call). Changes made through
 * this engine reach its own socket subscribers and `stream` triggers at once, and are published on
 * the other engine's `stream.events` topic, to which every bridged engine subscribes; each one
 * delivers the others' changes to its subscribers and triggers (its own come back marked and are
 * skipped). A change made on the other engine directly reaches that engine's subscribers only, as
 * in iii.
 */
export async function startStreamBridge(
  ctx: ModuleContext<unknown>,
  adapter: BridgeAdapterConfig,
  deliverLocally: (message: StreamMessage) => void,
): Promise<StreamBridge> {
  const bridge = new BridgeClient(adapter.config, 'eng-stream', ctx.log, (id) => ctx.core.workers.get(id) !== undefined);
  const origin = randomUUID();
  const eventsId = `eng::bridge::stream_events::${origin}`;
  bridge.client.registerFunction(
    eventsId,
    (input) => {
      if (!isStreamMessage(input)) {
        ctx.log.warn(`bridge ${bridge.shownUrl}: ignored a ${STREAM_EVENTS_TOPIC} message that is not a stream event`);
        return null;
      }
      const {
        eng_origin,
        _caller_worker_id: _publisher,
        ...message
      } = input as StreamMessage & {
        eng_origin?: string;
        _caller_worker_id?: string;
      };
      if (eng_origin !== origin) deliverLocally(message as StreamMessage);
      return null;
    },
    { description: 'Stream events of bridged engines, delivered to this engine', metadata: { internal: true } },
  );
  bridge.client.registerTrigger({ type: 'subscribe', function_id: eventsId, config: { topic: STREAM_EVENTS_TOPIC } });
  await bridge.start();

  let warned = false;
  return {
    bridge,
    remote: (functionId, input) => bridge.call(functionId, input, streamCallTrace.getStore()?.traceparent),
    publish(message) {
      bridge.call('publish', { topic: STREAM_EVENTS_TOPIC, data: { ...message, eng_origin: origin } }).then(
        () => {
          warned = false;
        },
        (err: Error) => {
          if (warned) return;
          warned = true;
          ctx.log.warn(`bridge ${bridge.shownUrl}: stream events are not shared with other bridged engines: ${err.message}`);
        },
      );
    },
  };
}
