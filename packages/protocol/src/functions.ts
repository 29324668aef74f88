import { z } from 'zod';

/** Ids of the functions the engine itself serves. */
export const EngineFunction = {
  FunctionsList: 'engine::functions::list',
  FunctionsInfo: 'engine::functions::info',
  FunctionsInvoke: 'engine::functions::invoke',
  WorkersList: 'engine::workers::list',
  WorkersInfo: 'engine::workers::info',
  WorkersRegister: 'engine::workers::register',
  TriggersList: 'engine::triggers::list',
  TriggerTypesList: 'engine::trigger-types::list',
  TriggersInfo: 'engine::triggers::info',
  RegisteredTriggersList: 'engine::registered-triggers::list',
  RegisteredTriggersInfo: 'engine::registered-triggers::info',
  RegisterTrigger: 'engine::register_trigger',
  UnregisterTrigger: 'engine::unregister_trigger',
  ChannelsCreate: 'engine::channels::create',
  QueueEnqueue: 'engine::queue::enqueue',
  /** eng only: the configuration file the engine runs, credentials redacted. */
  ConfigGet: 'engine::config::get',
} as const;

/** Trigger types the engine core provides (§5.10). */
export const EngineTriggerType = {
  FunctionsAvailable: 'engine::functions-available',
  WorkersAvailable: 'engine::workers-available',
} as const;

// Inputs of the introspection functions (§4.1). Unknown extra fields are ignored.
export const FunctionsListInput = z.object({
  include_internal: z.boolean().optional(),
  search: z.string().optional(),
  prefix: z.string().optional(),
  worker: z.string().optional(),
  workers: z.array(z.string()).optional(),
});
export const FunctionsInfoInput = z.union([
  z.object({ function_id: z.string().min(1) }),
  z.object({ function_ids: z.array(z.string()).min(1).max(32) }),
]);
/**
 * eng extension: invoke a function only if it still matches what the caller expects of it, checked
 * and dispatched in one step (no window between a look-up and the call). `expect.metadata` maps
 * flat metadata keys to the JSON value each must equal (null: absent or null).
 */
export const FunctionsInvokeInput = z.object({
  function_id: z.string().min(1),
  payload: z.unknown().optional(),
  expect: z.object({ metadata: z.record(z.string(), z.unknown()).optional() }).optional(),
  timeout_ms: z.number().int().positive().optional(),
});
export const WorkersListInput = z.object({
  worker_id: z.string().optional(),
  search: z.string().optional(),
  runtime: z.string().optional(),
  status: z.string().optional(),
  include_internal: z.boolean().optional(),
});
export const WorkersInfoInput = z.union([z.object({ name: z.string().min(1) }), z.object({ id: z.string().min(1) })]);
export const WorkersRegisterInput = z.object({
  _caller_worker_id: z.string(),
  runtime: z.string().nullish(),
  version: z.string().nullish(),
  name: z.string().nullish(),
  description: z.string().nullish(),
  os: z.string().nullish(),
  pid: z.number().int().nullish(),
  isolation: z.string().nullish(),
  telemetry: z.unknown().optional(),
});
export const TriggersListInput = z.object({
  include_internal: z.boolean().optional(),
  search: z.string().optional(),
  prefix: z.string().optional(),
  worker: z.string().optional(),
});
export const TriggersInfoInput = z.object({ id: z.string().min(1) });
export const RegisteredTriggersListInput = z.object({
  include_internal: z.boolean().optional(),
  search: z.string().optional(),
  trigger_type: z.string().optional(),
  function_id: z.string().optional(),
  worker: z.string().optional(),
});
export const RegisterTriggerInput = z.object({
  trigger_type: z.string().min(1),
  function_id: z.string().min(1),
  config: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export const UnregisterTriggerInput = z.object({ id: z.string().min(1), trigger_type: z.string().optional() });
export const ChannelsCreateInput = z.object({ buffer_size: z.number().int().optional() });
