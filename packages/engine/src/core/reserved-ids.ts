/**
 * The exact ids of engine built-ins a worker may not register (issue 26 item 1).
 *
 * Every id any eng module can serve (whether or not that module is loaded in this engine: a worker
 * must not claim `engine::queue::enqueue` because eng-queue is off), plus the ids iii 0.22.1's
 * engine serves, so a worker written for iii cannot take over a name its callers expect the engine
 * to answer. Other ids under `engine::` (iii's console registers `engine::console::*`) are a
 * worker's to register. `test/reserved-ids.test.ts` keeps this list complete: it starts every
 * module and fails on an id a module registers that is missing here.
 */

/** Function ids served by eng's modules (eng-engine-functions, eng-observability, eng-queue, eng-cron, the bus, the supervisor). */
export const ENG_BUILTIN_FUNCTION_IDS: readonly string[] = [
  'engine::channels::create',
  'engine::config::get',
  'engine::functions::info',
  'engine::functions::invoke',
  'engine::functions::list',
  'engine::health::check',
  'engine::log::debug',
  'engine::log::error',
  'engine::log::info',
  'engine::log::trace',
  'engine::log::warn',
  'engine::logs::clear',
  'engine::logs::list',
  'engine::metrics::list',
  'engine::alerts::list',
  'engine::rollups::list',
  'engine::queue::dlq_messages',
  'engine::queue::dlq_topics',
  'engine::queue::enqueue',
  'engine::queue::list_topics',
  'engine::queue::topic_stats',
  'engine::register_trigger',
  'engine::unregister_trigger',
  'engine::registered-triggers::info',
  'engine::registered-triggers::list',
  'engine::sampling::rules',
  'engine::supervisor::list',
  'engine::traces::clear',
  'engine::traces::group_by',
  'engine::traces::list',
  'engine::traces::spans',
  'engine::traces::tree',
  'engine::trigger-types::list',
  'engine::triggers::info',
  'engine::triggers::list',
  'engine::workers::info',
  'engine::workers::list',
  'engine::workers::register',
  'eng::cron::next_runs',
  'eng::cron::trigger_now',
  'eng::durable::publish',
  'eng::queue::discard_message',
  'eng::queue::redrive',
  'eng::queue::redrive_message',
  'iii::durable::publish',
  'iii::queue::discard_message',
  'iii::queue::redrive',
  'iii::queue::redrive_message',
];

/** Function ids iii 0.22.1's engine serves (engine/src/workers/*) that eng does not serve itself. */
export const III_BUILTIN_FUNCTION_IDS: readonly string[] = [
  'engine::alerts::evaluate',
  'engine::baggage::get',
  'engine::baggage::get_all',
  'engine::baggage::set',
  'iii::otel_passthrough',
];

/** Trigger type ids under `engine::` served by eng's modules or iii 0.22.1's engine. */
export const RESERVED_TRIGGER_TYPE_IDS: readonly string[] = ['engine::functions-available', 'engine::workers-available'];

const RESERVED_FUNCTIONS = new Set([...ENG_BUILTIN_FUNCTION_IDS, ...III_BUILTIN_FUNCTION_IDS]);
const RESERVED_TRIGGER_TYPES = new Set(RESERVED_TRIGGER_TYPE_IDS);

export function isReservedFunctionId(id: string): boolean {
  return RESERVED_FUNCTIONS.has(id);
}

export function isReservedTriggerTypeId(id: string): boolean {
  return RESERVED_TRIGGER_TYPES.has(id);
}
