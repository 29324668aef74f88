import type { QueryClient } from '@tanstack/react-query';
import { engine } from './client.ts';
import { functionKeys } from './functions.ts';
import { createShutdownRollback } from './shutdown-rollback.ts';
import { streamKeys } from './streams.ts';
import { supervisorKeys } from './supervisor.ts';
import { triggerKeys } from './triggers.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';
import { workerKeys } from './workers.ts';

/**
 * Push-driven freshness: this tab registers two hidden functions and binds them to the engine's
 * `engine::workers-available` and `engine::functions-available` triggers (engine-protocol §5.10),
 * so the counters and lists refresh the moment a worker or function comes or goes, without
 * polling. The SDK replays the registrations on every reconnect.
 */
let started = false;

export function startLiveUpdates(queryClient: QueryClient): void {
  if (started) return;
  started = true;
  const client = engine();
  const tab = Math.random().toString(36).slice(2, 10);
  // an engine shutting down drops its workers before its bus: keep what the lists showed before that
  const rollback = createShutdownRollback(queryClient, [
    workerKeys.all,
    functionKeys.all,
    triggerKeys.all,
    streamKeys.all,
    supervisorKeys.all,
  ]);
  client.on('disconnected', ({ code }) => rollback.onDisconnected(code));
  const hidden = { internal: true, 'eng.ui': true };

  const workersFn = `${UI_FUNCTION_PREFIX}${tab}::workers-changed`;
  client.registerFunction(
    workersFn,
    () => {
      rollback.beforeLiveRefresh();
      // a worker leaving takes its functions and bindings with it
      void queryClient.invalidateQueries({ queryKey: workerKeys.all });
      void queryClient.invalidateQueries({ queryKey: functionKeys.all });
      void queryClient.invalidateQueries({ queryKey: triggerKeys.all });
      void queryClient.invalidateQueries({ queryKey: streamKeys.all });
      void queryClient.invalidateQueries({ queryKey: supervisorKeys.all });
      notifyLive('workers');
      return null;
    },
    { description: 'console UI: refresh on worker changes', metadata: hidden },
  );
  client.registerTrigger({ type: 'engine::workers-available', function_id: workersFn, config: {} });

  const functionsFn = `${UI_FUNCTION_PREFIX}${tab}::functions-changed`;
  client.registerFunction(
    functionsFn,
    () => {
      rollback.beforeLiveRefresh();
      void queryClient.invalidateQueries({ queryKey: functionKeys.all });
      void queryClient.invalidateQueries({ queryKey: triggerKeys.all });
      notifyLive('functions');
      return null;
    },
    { description: 'console UI: refresh on function changes', metadata: hidden },
  );
  client.registerTrigger({ type: 'engine::functions-available', function_id: functionsFn, config: {} });
}

type LiveTopic = 'workers' | 'functions';
const liveListeners = new Set<(topic: LiveTopic) => void>();

/** Pages that want to flash or count live events subscribe here. */
export function onLiveEvent(listener: (topic: LiveTopic) => void): () => void {
  liveListeners.add(listener);
  return () => liveListeners.delete(listener);
}

function notifyLive(topic: LiveTopic): void {
  for (const listener of liveListeners) listener(topic);
}
