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

const UrlSchema = (schemes: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return schemes.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL`,
  );

/** Keys this worker reads; others (e.g. the reference's `injectable_ui`) are ignored. */
export const ConsoleConfigSchema = z.object({
  http_port: PortSchema.optional(),
  host: z.string().min(1, 'must not be empty').optional(),
  /** The engine's HTTP trigger port, for the Triggers page's HTTP test and the Config probes. */
  engine_http_url: UrlSchema(['http:', 'https:']).optional(),
  /** The engine's streams socket, proxied at /ws/streams for the Streams page's live monitor. */
  engine_streams_url: UrlSchema(['ws:', 'wss:']).optional(),
  /** The Flow page (eng-console's --enable-flow). */
  enable_flow: z.boolean().optional(),
});
export type ConsoleConfig = z.infer<typeof ConsoleConfigSchema>;

/** Where a setting came from, for the Config page (which flag or key to change). */
export type SettingSource = 'flag' | 'supervisor config' | 'config file' | 'engine' | 'engine config' | 'env' | 'default';

export interface WorkerSettings {
  httpPort: number;
  host: string;
  engineUrl: string;
  engineHttpUrl: string;
  engineStreamsUrl: string;
  enableFlow: boolean;
  sources: { engine_http_url: SettingSource; engine_streams_url: SettingSource; enable_flow: SettingSource };
  /** Absolute path of the config file looked at, and whether it existed. */
  configPath: string;
  configFound: boolean;
}

export interface FlagValues {
  config?: string;
  url?: string;
  httpPort?: string;
  host?: string;
  engineHttpUrl?: string;
  engineStreamsUrl?: string;
  enableFlow?: boolean;
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

/** Names of the engine modules that own the HTTP port and the streams socket (ours and iii's). */
const HTTP_MODULES = new Set(['eng-http', 'iii-http']);
const STREAM_MODULES = new Set(['eng-stream', 'iii-stream']);

/**
 * The engine's HTTP and streams addresses from an engine config.yaml (its `eng-http` and
 * `eng-stream` entries), when the file this worker reads is one: the file `npm start` runs.
 */
export function engineAddressesFrom(text: string, env: NodeJS.ProcessEnv = process.env): { http?: string; streams?: string } {
  const doc = parseDocument(substituteEnv(text, env));
  if (doc.errors.length || !isMap(doc.contents)) return {};
  const list = doc.contents.get('workers') ?? doc.contents.get('modules');
  if (!isSeq(list)) return {};
  const entries = list.toJSON() as Array<{ name?: unknown; config?: { port?: unknown; host?: unknown } | null }>;
  const url = (names: Set<string>, scheme: string, defaultPort: number) => {
    const entry = entries.find((e) => e && typeof e === 'object' && names.has(String(e.name)));
    if (!entry) return undefined;
    const port = Number(entry.config?.port ?? defaultPort);
    if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
    return `${scheme}://${loopbackFor(String(entry.config?.host ?? '127.0.0.1'))}:${port}`;
  };
  return { http: url(HTTP_MODULES, 'http', 3111), streams: url(STREAM_MODULES, 'ws', 3112) };
}

/** An address to dial for a listener bound to `host`: an unspecified bind means loopback. */
function loopbackFor(host: string): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return h.includes(':') ? `[${h}]` : h;
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

function parseUrlSetting(value: string, source: string, schemes: string[]): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(`${source} must be a ${schemes.join(' or ')} URL, got "${value}"`);
  }
  if (!schemes.includes(url.protocol.replace(/:$/, '')))
    throw new SettingsError(`${source} must be a ${schemes.join(' or ')} URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

/** `1`, `true`, `yes`, `on` (any case) are true, like eng-console's ENG_ENABLE_FLOW. */
function envFlag(value: string | undefined): boolean | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return /^(1|true|yes|on)$/i.test(value.trim());
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
  // launched by an engine, this worker gets its entry (ENG_WORKER_CONFIG) and the engine's addresses
  // from it: the ./config.yaml of its folder need not be the engine's file (`eng start -c other.yaml`)
  const launched = env.ENG_ENGINE_PID !== undefined && flags.config === undefined;
  const configFound = !launched && existsSync(configPath);
  let fileConfig: ConsoleConfig = {};
  let fromEngineConfig: { http?: string; streams?: string } = {};
  if (configFound) {
    let text: string;
    try {
      text = readFileSync(configPath, 'utf8');
    } catch (err) {
      throw new SettingsError(`cannot read ${configPath}: ${(err as Error).message}`);
    }
    fileConfig = extractConsoleBlock(text, configPath, env);
    fromEngineConfig = engineAddressesFrom(text, env);
  } else if (flags.config) {
    warn(`config file ${configPath} not found; using defaults`);
  }
  const supervised = parseWorkerConfigEnv(env.ENG_WORKER_CONFIG);
  const engineUrl = flags.url
    ? parseEngineUrl(flags.url, '--url')
    : env.ENG_URL
      ? parseEngineUrl(env.ENG_URL, 'ENG_URL')
      : DEFAULT_ENGINE_URL;
  // the engine's other two listeners: explicit settings first, then what the engine that launched
  // this worker says (ENG_HTTP_URL / ENG_STREAMS_URL), its config file, and last the bus host with
  // the default ports
  const busHost = new URL(engineUrl).hostname;
  const pick = (
    flag: string | undefined,
    flagName: string,
    key: 'engine_http_url' | 'engine_streams_url',
    fromEngine: string | undefined,
    engineVar: string,
    fallback: string,
    schemes: string[],
  ): [string, SettingSource] => {
    if (flag !== undefined) return [parseUrlSetting(flag, flagName, schemes), 'flag'];
    if (supervised[key]) return [supervised[key].replace(/\/+$/, ''), 'supervisor config'];
    if (fileConfig[key]) return [fileConfig[key].replace(/\/+$/, ''), 'config file'];
    const announced = env[engineVar];
    if (announced) return [parseUrlSetting(announced, engineVar, schemes), 'engine'];
    if (fromEngine) return [fromEngine, 'engine config'];
    return [fallback, 'default'];
  };
  const host = busHost.includes(':') && !busHost.startsWith('[') ? `[${busHost}]` : busHost;
  const [engineHttpUrl, httpSource] = pick(
    flags.engineHttpUrl,
    '--engine-http-url',
    'engine_http_url',
    fromEngineConfig.http,
    'ENG_HTTP_URL',
    `http://${host}:3111`,
    ['http', 'https'],
  );
  const [engineStreamsUrl, streamsSource] = pick(
    flags.engineStreamsUrl,
    '--engine-streams-url',
    'engine_streams_url',
    fromEngineConfig.streams,
    'ENG_STREAMS_URL',
    `ws://${host}:3112`,
    ['ws', 'wss'],
  );
  const flowFromEnv = envFlag(env.ENG_ENABLE_FLOW);
  const [enableFlow, flowSource]: [boolean, SettingSource] = flags.enableFlow
    ? [true, 'flag']
    : supervised.enable_flow !== undefined
      ? [supervised.enable_flow, 'supervisor config']
      : fileConfig.enable_flow !== undefined
        ? [fileConfig.enable_flow, 'config file']
        : flowFromEnv !== undefined
          ? [flowFromEnv, 'env']
          : [false, 'default'];
  return {
    httpPort:
      flags.httpPort !== undefined ? parsePortFlag(flags.httpPort) : (supervised.http_port ?? fileConfig.http_port ?? DEFAULT_HTTP_PORT),
    host: flags.host ?? supervised.host ?? fileConfig.host ?? DEFAULT_HOST,
    engineUrl,
    engineHttpUrl,
    engineStreamsUrl,
    enableFlow,
    sources: { engine_http_url: httpSource, engine_streams_url: streamsSource, enable_flow: flowSource },
    configPath,
    configFound,
  };
}
