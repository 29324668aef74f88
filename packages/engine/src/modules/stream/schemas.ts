import { z } from 'zod';
import { UpdateOpsSchema } from '../../stores/update-ops.ts';
import { nameField } from '../state/schemas.ts';

// spec: engine-protocol §4.5 (functions), §5.7 (trigger configs), §6.2 (socket messages).

const stream_name = nameField('stream_name');
const group_id = nameField('group_id');
const item_id = nameField('item_id');

export const StreamItemInput = z.object({ stream_name, group_id, item_id });
export const StreamSetInput = z
  .object({ stream_name, group_id, item_id, data: z.unknown().optional() })
  .refine((input) => 'data' in input, { error: 'data is required', path: ['data'] });
export const StreamGroupInput = z.object({ stream_name, group_id });
export const StreamListGroupsInput = z.object({ stream_name });
export const StreamUpdateInput = z.object({
  stream_name,
  group_id,
  item_id,
  ops: z
    .array(z.unknown(), { error: (issue) => (issue.input === undefined ? 'ops is required' : 'ops must be an array') })
    .pipe(UpdateOpsSchema),
});
export const StreamSendInput = z.object({
  stream_name,
  group_id,
  id: z.string({ error: 'id must be a string' }).min(1, { error: 'id must not be empty' }).optional(),
  type: nameField('type'),
  data: z.unknown().optional(),
});
export const StreamListAllInput = z.object({});

export const StreamTriggerConfig = z.object({
  // spec §5.7: required in effect (iii panics without it); here a clear refusal instead
  stream_name: nameField('stream_name'),
  group_id: z.string({ error: 'group_id must be a string' }).optional(),
  item_id: z.string({ error: 'item_id must be a string' }).optional(),
  condition_function_id: z.string({ error: 'condition_function_id must be a string' }).min(1).optional(),
});
export type StreamTriggerConfig = z.infer<typeof StreamTriggerConfig>;

/** `stream:join` / `stream:leave`: `stream_name` is accepted but not used for filtering (spec §5.7). */
export const JoinLeaveTriggerConfig = z.object({
  stream_name: z.string({ error: 'stream_name must be a string' }).optional(),
  condition_function_id: z.string({ error: 'condition_function_id must be a string' }).min(1).optional(),
});

/** Client → engine on the streams socket. */
export const SocketMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('join'),
    data: z.object({
      subscriptionId: z.string().min(1),
      streamName: z.string().min(1),
      groupId: z.string().min(1),
      id: z.string().min(1).nullish(),
    }),
  }),
  z.object({
    type: z.literal('leave'),
    data: z.object({
      subscriptionId: z.string().min(1),
      streamName: z.string().optional(),
      groupId: z.string().optional(),
      id: z.string().nullish(),
    }),
  }),
]);
export type SocketMessage = z.infer<typeof SocketMessage>;
