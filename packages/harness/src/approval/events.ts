import { z } from 'zod';
import { type EventTypes, metadataMatches } from '../shared/event-types.ts';
import type { PendingRecord } from './pending.ts';

export const ApprovalEvent = {
  PendingCreated: 'approval::pending-created',
  PendingResolved: 'approval::pending-resolved',
} as const;

const Filter = z.strictObject({
  session_id: z.string({ error: 'session_id must be a string' }).min(1, { error: 'session_id must not be empty' }).optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'metadata must be an object' }).optional(),
});

const matches = (f: z.infer<typeof Filter>, r: PendingRecord) =>
  (f.session_id === undefined || f.session_id === r.session_id) && metadataMatches(f.metadata, r.session_metadata);

export function defineApprovalEvents(events: EventTypes): void {
  events.define(ApprovalEvent.PendingCreated, 'A function call was held for a decision; filters: session_id, metadata', Filter, matches);
  events.define(
    ApprovalEvent.PendingResolved,
    'A held call was allowed, denied, timed out or aborted (once per record); filters: session_id, metadata',
    Filter,
    matches,
  );
}
