import { z } from 'zod';
import type { EventTypes } from '../shared/event-types.ts';

// spec: console-worker §2.3 — the harness's trigger types. Bindings may filter on session_id.

export const HarnessEvent = {
  TurnStarted: 'harness::turn-started',
  TurnCompleted: 'harness::turn-completed',
  MessageQueued: 'harness::message-queued',
} as const;

export interface TurnStartedEvent {
  session_id: string;
  turn_id: string;
  timestamp: number;
}

export interface TurnCompletedEvent {
  session_id: string;
  turn_id: string;
  status: 'completed' | 'cancelled' | 'failed';
  result?: string;
  result_error?: string;
  reason?: string;
  timestamp: number;
  terminal: boolean;
}

export interface MessageQueuedEvent {
  session_id: string;
  turn_id: string;
  entry_id: string;
  timestamp: number;
}

const Filter = z.strictObject({
  session_id: z.string({ error: 'session_id must be a string' }).min(1, { error: 'session_id must not be empty' }).optional(),
});
const matches = (filter: z.infer<typeof Filter>, event: { session_id: string }) =>
  filter.session_id === undefined || filter.session_id === event.session_id;

export function defineHarnessEvents(events: EventTypes): void {
  events.define(HarnessEvent.TurnStarted, 'A turn started: {session_id, turn_id, timestamp}; filter: session_id', Filter, matches);
  events.define(
    HarnessEvent.TurnCompleted,
    'A turn ended: {session_id, turn_id, status: completed|cancelled|failed, result?, result_error?, reason?, timestamp, terminal}; filter: session_id',
    Filter,
    matches,
  );
  events.define(
    HarnessEvent.MessageQueued,
    'A message was queued behind a running step (a doorbell: read harness::status); filter: session_id',
    Filter,
    matches,
  );
}
