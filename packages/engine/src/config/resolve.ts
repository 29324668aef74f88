import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The user configuration file: `~/.eng/config.yaml` (ENG_HOME overrides `~/.eng`). */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.ENG_HOME ?? join(homedir(), '.eng'), 'config.yaml');
}

/**
 * Which config file a command uses: `--config`, else `$ENG_CONFIG`, else `./config.yaml` when it
 * exists, else the user configuration file.
 */
export function resolveConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  if (env.ENG_CONFIG) return resolve(env.ENG_CONFIG);
  const local = resolve('config.yaml');
  if (existsSync(local)) return local;
  return userConfigPath(env);
}
