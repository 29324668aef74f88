import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';

// spec: engine-protocol §7.1 — `workers:` (alias `modules:`) of `{name, config}` entries.

export const WorkerEntrySchema = z
  .object({
    name: z.string().min(1, 'name must not be empty'),
    config: z.record(z.string(), z.unknown()).nullish(),
    /** External workers only: the command that runs it (otherwise resolved by name). */
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
  })
  .strict();
export type WorkerEntry = z.infer<typeof WorkerEntrySchema>;

export const EngineConfigSchema = z
  .object({
    workers: z.array(WorkerEntrySchema).nullish(),
    modules: z.array(WorkerEntrySchema).nullish(),
  })
  .strict();

export interface EngineConfig {
  /** Absolute path of the file read, or null when the defaults were used. */
  path: string | null;
  workers: WorkerEntry[];
  /** The file as written (before `${VAR}` substitution), for `engine::config::get`. */
  text?: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * spec §7.1: `${VAR}` / `${VAR:default}` is substituted textually before YAML parsing; an unset
 * variable without a default is an error that names it.
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, file: string, version: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (match, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback === '__ENG_ENGINE_VERSION__' || fallback === '__III_ENGINE_VERSION__' ? version : fallback;
    const line = text.slice(0, text.indexOf(match)).split('\n').length;
    throw new ConfigError(`${file}:${line}: environment variable ${name} is not set and has no default (write \${${name}:default})`);
  });
}

export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env, version = '0.0.0'): EngineConfig {
  const substituted = substituteEnv(text, env, file, version);
  let raw: unknown;
  try {
    raw = parseYaml(substituted) ?? {};
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const pos = err.linePos?.[0];
      throw new ConfigError(`${file}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid YAML: ${err.message.split('\n')[0]}`);
    }
    throw err;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${file}: the top level must be a mapping with a "workers:" list`);
  }
  const parsed = EngineConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new ConfigError(`${file}: ${describeIssue(raw as Record<string, unknown>, issue)}`);
  }
  const workers = [...(parsed.data.workers ?? []), ...(parsed.data.modules ?? [])];
  return { path: file, workers, text };
}

/** Name the entry and the key a problem is in: `workers[2] (eng-http): config.port: …`. */
export function describeIssue(raw: Record<string, unknown>, issue: z.core.$ZodIssue, prefix: PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const where = path.length ? `${formatPath(raw, path)}: ` : '';
    return `${where}unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  }
  return `${formatPath(raw, path)}: ${issue.message}`;
}

function formatPath(raw: Record<string, unknown>, path: PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  let out = '';
  let node: unknown = raw;
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    if (typeof key === 'number') {
      out += `[${key}]`;
      node = Array.isArray(node) ? node[key] : undefined;
      // name the entry: workers[2] (eng-http)
      if (i === 1 && node && typeof node === 'object' && typeof (node as { name?: unknown }).name === 'string') {
        out += ` (${(node as { name: string }).name})`;
      }
    } else {
      out += out ? `.${String(key)}` : String(key);
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[String(key)] : undefined;
    }
  }
  return out;
}

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env, version = '0.0.0'): EngineConfig | null {
  const file = resolve(path);
  if (!existsSync(file)) return null;
  return parseConfigText(readFileSync(file, 'utf8'), file, env, version);
}
