/**
 * Node kinds of the Flow page's graph (seed 2.8), in legend order. Its own module so that the
 * route (eager) validates `?kinds=` without pulling the graph code into the initial bundle.
 */
export type FlowKind = 'http' | 'cron' | 'event' | 'queue' | 'state' | 'function' | 'trigger';

/** Kinds offered as filter chips on the Flow page. */
export const FILTER_KINDS: FlowKind[] = ['http', 'cron', 'event', 'queue', 'state', 'function', 'trigger'];
