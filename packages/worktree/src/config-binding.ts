import { type EngClient, EngError, ErrorCode } from '@eng/sdk';
import { CONFIG_JSON_SCHEMA, DEFAULT_CONFIG, parseConfig, type WorktreeConfig } from './config.ts';

export const CONFIG_ID = 'worktree';
const RELOAD_FUNCTION = 'worktree::on-config-change';

export interface ConfigSource {
  current(): WorktreeConfig;
  /** True while the engine's `configuration::*` holds the entry (else: defaults + ENG_WORKER_CONFIG). */
  readonly live: boolean;
}

/**
 * Keep the worker's settings in the engine's `worktree` configuration entry: register its schema
 * with `seed` (defaults + ENG_WORKER_CONFIG) as the first value, read it, and reload it through the
 * `configuration` trigger so gates take effect at once. An engine without `configuration::*`
 * (iii 0.11) leaves the worker on `seed`, and the log says so.
 */
export async function bindConfig(
  client: EngClient,
  seed: Record<string, unknown>,
  log: (line: string) => void,
  onChange: (config: WorktreeConfig, previous: WorktreeConfig) => void,
): Promise<ConfigSource> {
  const fallback = parseConfig({ ...seed }, 'ENG_WORKER_CONFIG');
  let current = fallback;
  const adopt = (value: unknown, source: string): boolean => {
    try {
      const next = parseConfig(value, `configuration entry ${CONFIG_ID}`);
      const previous = current;
      current = next;
      onChange(next, previous);
      return true;
    } catch (err) {
      log(`${source}: ${(err as Error).message}; keeping the previous settings`);
      return false;
    }
  };
  const read = async () => (await client.call<{ value: unknown }>('configuration::get', { id: CONFIG_ID }, { timeoutMs: 5000 }))?.value;

  try {
    await client.call(
      'configuration::register',
      {
        id: CONFIG_ID,
        name: 'Worktree worker',
        description: 'git worktrees for parallel agents: root, branch prefix, prune schedule, land queue and safety gates',
        schema: CONFIG_JSON_SCHEMA,
        defaults: { ...DEFAULT_CONFIG, ...seed },
      },
      { timeoutMs: 5000 },
    );
    adopt(await read(), 'reading the configuration entry');
  } catch (err) {
    const e = EngError.from(err);
    const why = e.code === ErrorCode.FunctionNotFound ? 'the engine has no configuration::* functions' : `${e.code}: ${e.message}`;
    log(`configuration entry ${CONFIG_ID} unavailable (${why}); using the defaults and ENG_WORKER_CONFIG`);
    return { current: () => current, live: false };
  }

  client.registerFunction(
    RELOAD_FUNCTION,
    async (event: { new_value?: unknown; event_type?: string }) => {
      if (event?.event_type === 'configuration:deleted') {
        adopt(fallback, 'configuration entry deleted');
        return {};
      }
      try {
        adopt(await read(), 'reloading the configuration entry');
      } catch (err) {
        log(`reloading configuration ${CONFIG_ID} failed: ${(err as Error).message}`);
      }
      return {};
    },
    { description: 'reloads the worktree configuration entry', metadata: { internal: true } },
  );
  client.registerTrigger({ type: 'configuration', function_id: RELOAD_FUNCTION, config: { configuration_id: CONFIG_ID } });
  return { current: () => current, live: true };
}
