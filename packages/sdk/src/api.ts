import type { TriggerAction as WireTriggerAction } from '@eng/protocol';

// What both entry points (index.ts for Node, browser.ts) export besides `connect`.

export { type ChannelRef, EngError, type ErrorBody, ErrorCode, isChannelRef } from '@eng/protocol';
export { CHANNEL_CLOSED, CHANNEL_FRAME_BYTES, type Channel, ChannelReader, ChannelWriter } from './channels.ts';
export { EngClient } from './client.ts';
export { randomHex } from './ids.ts';
export type { WebSocketConstructor } from './socket.ts';
export { formatTraceparent, newTraceparent, parseTraceparent, type WorkerSpan } from './tracing.ts';
export type * from './types.ts';
export { SDK_VERSION } from './version.ts';

/** The routing of a `trigger()` call (spec §2.3.9), built the way iii-sdk's `TriggerAction` builds it. */
export type TriggerAction = WireTriggerAction;
export const TriggerAction = {
  /** Fire and forget: the call resolves undefined at once, the function still runs. */
  Void: (): TriggerAction => ({ type: 'void' }),
  /** Through a queue: the call resolves `{messageReceiptId}` once the message is accepted. */
  Enqueue: (options: { queue: string }): TriggerAction => ({ type: 'enqueue', queue: options.queue }),
} as const;
