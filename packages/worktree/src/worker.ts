import type { EngClient } from '@eng/sdk';
import { registerClaims } from './claims.ts';
import { emptyTrash } from './cleanup.ts';
import { configFromEnv, DEFAULT_CONFIG, resolveRoot, type WorktreeConfig } from './config.ts';
import { bindConfig } from './config-binding.ts';
import type { Ctx } from './context.ts';
import { registerCreate } from './create.ts';
import { EVENT_TYPES, LifecycleEvents } from './events.ts';
import { registerLand } from './land.ts';
import { Locks } from './locks.ts';
import { PruneSchedule, registerPrune } from './prune.ts';
import { registerQueries } from './queries.ts';
import { registerRemove } from './remove.ts';
import { StatusReader } from './status.ts';
import { Store } from './store.ts';

export interface StartedWorktreeWorker {
  summary: string;
  stop(): Promise<void>;
}

/**
 * Start the worktree worker on a connected client: load its state, register its functions and
 * six trigger types, bind its configuration entry and prune schedule, then resume any land a
 * previous run left queued or running.
 */
export async function startWorktreeWorker(client: EngClient, log: (line: string) => void): Promise<StartedWorktreeWorker> {
  const seed = configFromEnv(process.env.ENG_WORKER_CONFIG);
  let config: WorktreeConfig = { ...DEFAULT_CONFIG };
  let schedule: PruneSchedule | undefined;

  const store = new Store(client);
  await untilStateAnswers(() => store.load(), log);

  const ctx: Ctx = {
    client,
    store,
    events: new LifecycleEvents(client),
    locks: new Locks(),
    status: new StatusReader(() => config.git_timeout_ms),
    config: () => config,
    log,
  };
  let warned = false;
  const adopt = (next: WorktreeConfig) => {
    config = next;
    // installed workers stored the old default (true): say once why callers' test commands stopped
    if (next.gates.allow_test_cmd && !next.gates.allow_caller_test_cmd && !warned) {
      warned = true;
      log('gates.allow_test_cmd is no longer read: a land may carry its own test_cmd only with gates.allow_caller_test_cmd: true');
    }
  };
  const source = await bindConfig(client, seed, log, (next) => {
    adopt(next);
    schedule?.apply();
  });
  adopt(source.current());

  registerCreate(ctx);
  registerQueries(ctx);
  registerClaims(ctx);
  registerRemove(ctx);
  registerPrune(ctx);
  const land = registerLand(ctx);
  schedule = new PruneSchedule(ctx);
  schedule.apply();

  // the client is connected already: a later `connected` is a reconnect, maybe to a restarted engine
  client.on('connected', () => {
    void store.persistAll().catch((err) => log(`re-storing the worktree records failed: ${(err as Error).message}`));
  });

  await emptyTrash(resolveRoot(config.worktree_root)).catch(() => undefined);
  land.recover();
  const managed = store.all().length;
  return {
    summary: `11 functions, ${EVENT_TYPES.length} trigger types, ${managed} managed worktree${managed === 1 ? '' : 's'}, root ${resolveRoot(config.worktree_root)}${source.live ? '' : ' (configuration::* absent: defaults)'}`,
    async stop() {
      // a land in flight is recorded phase by phase; the next start resumes it
    },
  };
}

/** The worker keeps its records through state::*: wait for the engine's state module, saying what is missing. */
async function untilStateAnswers(run: () => Promise<void>, log: (line: string) => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt === 0) log(`state::* does not answer (${(err as Error).message}); the worker needs the engine's state module. Retrying…`);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
}
