import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeZodError } from '@eng/protocol';
import { isMap, isSeq, parseDocument } from 'yaml';
import { z } from 'zod';

/**
 * Settings of the console worker (seed 4.4, console-worker spec §1.2–1.3). Precedence, lowest
 * first: defaults, the `--config` file, `ENG_WORKER_CONFIG` (the engine supervisor passes the
 * worker's `config:` block), then flags. The engine URL is not a config key: `--url`, else `ENG_URL`.
 */
export const DEFAULT_HTTP_PORT = 3113;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_ENGINE_URL = 'ws://127.0.0.1:49134';
export const DEFAULT_CONFIG_FILE = 'config.yaml';
/** Names this worker's entry may have in an engine config's `workers:` list. */
const ENTRY_NAMES = new Set(['console', 'eng-console-worker', 'iii-console']);

const PortSchema = z.number().int('must be an integer').min(0, 'must be 0-65535').max(65535, 'must be 0-65535');

/** Keys this worker reads; others (e.g. the reference's `injectable_ui`) are ignored. */
export const ConsoleConfigSchema = z.object({
  http_port: PortSchema.optional(),
  host: z.string().min(1, 'must not be empty').optional(),
});
export type ConsoleConfig = z.infer<typeof ConsoleConfigSchema>;

export interface WorkerSettings {
  httpPort: number;
  host: string;
  engineUrl: string;
  /** Absolute path of the config file looked at, and whether it existed. */
  configPath: string;
  configFound: boolean;
}

export interface FlagValues {
  config?: string;
  url?: string;
  httpPort?: string;
  host?: string;
}

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** `${VAR}` / `${VAR:default}` like the engine's config loader, so an engine config.yaml reads the same here. */
function substituteEnv(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (_m, name: string, fallback?: string) => env[name] ?? fallback ?? '');
}

/**
 * This worker's block in a YAML file: the file itself (`http_port: 3113`), a top-level `console:`
 * mapping, or the `config:` of the `console` entry in an engine config's `workers:` list.
 */
export function extractConsoleBlock(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const doc = parseDocument(substituteEnv(text, env));
  if (doc.errors.length) throw new SettingsError(`${file}: invalid YAML: ${doc.errors[0]?.message.split('\n')[0]}`);
  const root = doc.contents;
  if (root === null || root === undefined) return {};
  if (!isMap(root)) throw new SettingsError(`${file}: the top level must be a mapping`);
  let block: unknown = root.toJSON();
  let where = file;
  const list = root.get('workers') ?? root.get('modules');
  if (isSeq(list)) {
    const entries = list.toJSON() as Array<{ name?: unknown; config?: unknown }>;
    const index = entries.findIndex((e) => e && typeof e === 'object' && ENTRY_NAMES.has(String(e.name)));
    block = index >= 0 ? (entries[index]?.config ?? {}) : {};
    where = `${file}: workers[${index}] (console) config`;
  } else if (isMap(root.get('console'))) {
    block = (root.toJSON() as { console: unknown }).console;
    where = `${file}: console`;
  }
  return parseBlock(block, where);
}

function parseBlock(block: unknown, where: string): ConsoleConfig {
  if (block === null || block === undefined) return {};
  const parsed = ConsoleConfigSchema.safeParse(block);
  if (!parsed.success) throw new SettingsError(`${where}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** `ENG_WORKER_CONFIG`: JSON of the entry's `config:` block, set by the engine supervisor. */
export function parseWorkerConfigEnv(value: string | undefined): ConsoleConfig {
  if (value === undefined || value.trim() === '') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch (err) {
    throw new SettingsError(`ENG_WORKER_CONFIG is not valid JSON: ${(err as Error).message}`);
  }
  return parseBlock(raw, 'ENG_WORKER_CONFIG');
}

export function parsePortFlag(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new SettingsError(`--http-port must be a port number (0-65535), got "${value}"`);
  const port = Number(value);
  if (port > 65535) throw new SettingsError(`--http-port must be a port number (0-65535), got "${value}"`);
  return port;
}

export function parseEngineUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(`${source} must be a ws:// or wss:// URL, got "${value}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new SettingsError(`${source} must be a ws:// or wss:// URL, got "${value}"`);
  return value;
}

export function resolveSettings(
  flags: FlagValues,
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = () => undefined,
): WorkerSettings {
  const configPath = resolve(flags.config ?? DEFAULT_CONFIG_FILE);
  const configFound = existsSync(configPath);
  let fileConfig: ConsoleConfig = {};
  if (configFound) {
    let text: string;
    try {
      text = readFileSync(configPath, 'utf8');
    } catch (err) {
      throw new SettingsError(`cannot read ${configPath}: ${(err as Error).message}`);
    }
    fileConfig = extractConsoleBlock(text, configPath, env);
  } else if (flags.config) {
    warn(`config file ${configPath} not found; using defaults`);
  }
  const supervised = parseWorkerConfigEnv(env.ENG_WORKER_CONFIG);
  const engineUrl = flags.url
    ? parseEngineUrl(flags.url, '--url')
    : env.ENG_URL
      ? parseEngineUrl(env.ENG_URL, 'ENG_URL')
      : DEFAULT_ENGINE_URL;
  return {
    httpPort:
      flags.httpPort !== undefined ? parsePortFlag(flags.httpPort) : (supervised.http_port ?? fileConfig.http_port ?? DEFAULT_HTTP_PORT),
    host: flags.host ?? supervised.host ?? fileConfig.host ?? DEFAULT_HOST,
    engineUrl,
    configPath,
    configFound,
  };
}
