import { existsSync, readFileSync } from 'node:fs';
import { EngError } from '@eng/protocol';
import type { Command } from 'commander';
import { parseConfigText } from '../config/load.ts';
import { resolveConfigPath } from '../config/resolve.ts';
import { redact } from '../log.ts';
import { busUrlOf } from '../supervisor/query.ts';
import { err as pc } from './colors.ts';

interface TriggerOptions {
  json?: string;
  timeoutMs: string;
  config?: string;
  url?: string;
  address?: string;
  port?: string;
  void?: boolean;
}

/** `k=v` pairs: values that parse as JSON (numbers, booleans, objects) are used as such, else as strings. */
export function parsePairs(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`argument "${pair}" is not key=value`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new Error(`key "${key}" is not allowed`);
    out[key] = value;
  }
  return out;
}

/** Which engine a command talks to, and why that one (printed when it cannot be reached). */
export interface EngineTarget {
  url: string;
  source: string;
}

/**
 * The bus `eng trigger` dials: `--url` (or `--address`/`--port`), else the eng-worker-manager entry
 * of `-c FILE`, else `$ENG_URL`, else that entry of the configuration `eng start` would read
 * (`$ENG_CONFIG`, `./config.yaml`, `~/.eng/config.yaml`), else ws://127.0.0.1:49134. Flags beat the
 * environment, which beats the file lookup: a worker's shell (ENG_URL set by the supervisor)
 * reaches the engine that launched it.
 */
export function resolveEngineTarget(
  options: Pick<TriggerOptions, 'url' | 'address' | 'port' | 'config'>,
  env: NodeJS.ProcessEnv = process.env,
): EngineTarget {
  if (options.url) return { url: options.url, source: '--url' };
  if (options.address || options.port)
    return { url: `ws://${options.address ?? '127.0.0.1'}:${options.port ?? '49134'}`, source: '--address/--port' };
  if (env.ENG_URL && !options.config) return { url: env.ENG_URL, source: '$ENG_URL' };
  const file = resolveConfigPath(options.config, env);
  // no file: `eng start` runs the defaults, the bus on 49134
  if (!existsSync(file)) return { url: 'ws://127.0.0.1:49134', source: `the default: no configuration file at ${file}` };
  // the same ${VAR:default} substitution as `eng start`, so ENG_BUS_PORT moves both
  return { url: busUrlOf(parseConfigText(readFileSync(file, 'utf8'), file, env)), source: file };
}

export function registerTriggerCommand(program: Command): void {
  program
    .command('trigger')
    .description('call a function on a running engine and print the result as JSON')
    .argument('<function_id>', 'function to call, for example orders::create')
    .argument('[pairs...]', 'payload fields as key=value (values are parsed as JSON when they can be)')
    .option('--json <payload>', 'payload as a JSON object (merged under the key=value pairs)')
    .option('--timeout-ms <n>', 'give up after this many milliseconds', '30000')
    .option('--url <ws-url>', 'engine bus URL (default $ENG_URL, else the bus of the configuration file, else ws://127.0.0.1:49134)')
    .option(
      '-c, --config <file>',
      'configuration file whose bus to dial (default $ENG_CONFIG, ./config.yaml if present, else ~/.eng/config.yaml)',
    )
    .option('--address <host>', 'engine host (with --port, instead of --url)')
    .option('--port <port>', 'engine bus port')
    .option('--void', 'fire and forget: do not wait for a result')
    .action(async (functionId: string, pairs: string[], options: TriggerOptions) => {
      const exit = (code: number, message: string) => {
        process.stderr.write(`${message}\n`);
        process.exit(code);
      };
      let payload: Record<string, unknown> = {};
      if (options.json !== undefined) {
        try {
          const parsed = JSON.parse(options.json) as unknown;
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
            return exit(2, 'eng trigger: --json must be a JSON object');
          payload = parsed as Record<string, unknown>;
        } catch (err) {
          return exit(2, `eng trigger: --json is not valid JSON: ${(err as Error).message}`);
        }
      }
      try {
        payload = { ...payload, ...parsePairs(pairs) };
      } catch (err) {
        return exit(2, `eng trigger: ${(err as Error).message}`);
      }
      const timeoutMs = Number(options.timeoutMs);
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
        return exit(2, `eng trigger: --timeout-ms must be a positive number, got "${options.timeoutMs}"`);
      let target: EngineTarget;
      try {
        target = resolveEngineTarget(options);
      } catch (err) {
        return exit(2, `eng trigger: ${(err as Error).message}`);
      }
      const { url } = target;
      const engineLine = `eng trigger: engine ${redact(url)} (from ${target.source})`;

      // loaded on use so `eng start` does not pay for the SDK
      const { connect } = await import('@eng/sdk');
      const client = connect(url, { name: 'eng-cli', reconnect: { maxRetries: 0 }, registerWorker: false });
      try {
        await client.ready({ timeoutMs: Math.min(timeoutMs, 5000) });
      } catch {
        await client.close();
        return exit(3, `eng trigger: cannot reach the engine at ${redact(url)} (from ${target.source})`);
      }
      try {
        const result = await client.trigger({
          function_id: functionId,
          payload,
          timeoutMs,
          action: options.void ? { type: 'void' } : undefined,
        });
        process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);
        await client.close();
        process.exit(0);
      } catch (err) {
        const e = EngError.from(err);
        await client.close();
        process.stderr.write(`${pc.red(`error ${e.code}`)}: ${e.message}\n${engineLine}\n`);
        process.stdout.write(`${JSON.stringify({ error: { code: e.code, message: e.message } })}\n`);
        process.exit(1);
      }
    });
}
