import { parseArgs } from 'node:util';
import { describeZodError, redactUrl } from '@eng/protocol';
import { z } from 'zod';

// spec: seed §4.4 (component C flags). The supervisor passes the `config:` block of config.yaml
// as JSON in ENG_WORKER_CONFIG (`eng worker add mcp` writes `{no_stdio: true}`); flags win over it.

export const DEFAULT_ENGINE_URL = 'ws://localhost:49134';

export interface McpOptions {
  engineUrl: string;
  noStdio: boolean;
  exposeAll: boolean;
  noBuiltins: boolean;
  httpBuiltins: boolean;
  tier?: string;
  debug: boolean;
  /** Extra `Origin` values accepted on /mcp besides loopback origins. */
  allowedOrigins: string[];
  /** Extra `Host` values accepted on /mcp besides loopback hosts. */
  allowedHosts: string[];
  /** Largest JSON-RPC body accepted on POST /mcp. */
  maxBodyBytes: number;
  /** Deadline of one tool invocation on the engine. */
  invocationTimeoutMs: number;
  /** How often the exposed set, workers and triggers are re-read to catch changes no event reports. */
  pollMs: number;
  /** A JSON-answered HTTP request still running after this long is switched to an SSE stream. */
  sseAfterMs: number;
  /** Worker name on the engine. */
  workerName: string;
  /** HTTP sessions held at once (the stdio session is not counted). */
  maxSessions: number;
  /** Approximate memory all HTTP sessions may hold together (fixed cost + what clients sent to keep). */
  maxSessionBytes: number;
  /** An HTTP session with no request (and no open GET stream) for this long ends. */
  sessionIdleMs: number;
  /** A session active within this window is never evicted to make room: new ones get 503 instead. */
  sessionProtectMs: number;
  /** What one HTTP session's SSE events kept for resumption (Last-Event-ID) may take. */
  replayBytes: number;
  /** The path of the MCP endpoint on the engine's HTTP port (`mcp` → /mcp). */
  httpPath: string;
}

export const SESSION_DEFAULTS = {
  maxSessions: 1000,
  maxSessionBytes: 64 * 1024 * 1024,
  sessionIdleMs: 30 * 60_000,
  sessionProtectMs: 5 * 60_000,
  replayBytes: 1024 * 1024,
} as const;

export const USAGE = `Usage: eng-mcp [options]

Expose opted-in eng functions (metadata "mcp.expose": true) to MCP clients as tools.

Options:
  --engine-url <URL>  engine WebSocket URL (default: $ENG_URL or ${DEFAULT_ENGINE_URL})
  --no-stdio          skip stdio and run HTTP-only (POST /mcp on the engine HTTP port)
  --expose-all        ignore the mcp.expose gate (development only); the hard floor still applies
  --no-builtins       hide the 6 built-in tools everywhere; always wins over --http-builtins
  --http-builtins     also advertise built-ins over HTTP
  --tier <name>       show only functions whose mcp.tier equals the name
  --debug             verbose logging (stderr)
  --max-sessions <n>  HTTP sessions held at once (default ${SESSION_DEFAULTS.maxSessions})
  --max-session-bytes <n>
                      approximate memory of all HTTP sessions together (default ${SESSION_DEFAULTS.maxSessionBytes}, 64 MiB)
  --session-idle-ms <ms>
                      end an HTTP session idle this long (default ${SESSION_DEFAULTS.sessionIdleMs}, 30 min)
  --session-protect-ms <ms>
                      never evict a session active this recently; answer 503 instead (default ${SESSION_DEFAULTS.sessionProtectMs}, 5 min)
  --http-path <path>  the MCP endpoint's path on the engine HTTP port (default mcp, i.e. /mcp)
  -h, --help          show this help
  -V, --version       print the version

Logs go to stderr; stdout carries the MCP protocol only.`;

/** Below this the budget cannot hold one ordinary session. */
const MIN_SESSION_BYTES = 64 * 1024;

/** A non-negative integer flag value no smaller than `min`, or the reason it is not one. */
function intFlag(flag: string, value: string | undefined, min: number): number | undefined | string {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return `${flag} must be a whole number, got "${value}"`;
  const n = Number(text);
  return n < min ? `${flag} must be at least ${min}, got ${n}` : n;
}

const WorkerConfig = z
  .object({
    engine_url: z.string().min(1).optional(),
    no_stdio: z.boolean().optional(),
    expose_all: z.boolean().optional(),
    no_builtins: z.boolean().optional(),
    http_builtins: z.boolean().optional(),
    tier: z.string().min(1).optional(),
    debug: z.boolean().optional(),
    allowed_origins: z.array(z.string()).optional(),
    allowed_hosts: z.array(z.string()).optional(),
    max_body_bytes: z.number().int().positive().optional(),
    invocation_timeout_ms: z.number().int().positive().optional(),
    poll_ms: z.number().int().min(100).optional(),
    sse_after_ms: z.number().int().min(0).optional(),
    max_sessions: z.number().int().min(1).optional(),
    max_session_bytes: z.number().int().min(MIN_SESSION_BYTES).optional(),
    session_idle_ms: z.number().int().min(1000).optional(),
    session_protect_ms: z.number().int().min(0).optional(),
    replay_bytes: z.number().int().min(0).optional(),
    http_path: z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/)
      .optional(),
  })
  .strict();

export type ParsedCommand =
  | { kind: 'run'; options: McpOptions }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'error'; message: string };

function readWorkerConfig(text: string | undefined): z.infer<typeof WorkerConfig> | string {
  if (!text || text.trim() === '') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return `ENG_WORKER_CONFIG is not valid JSON: ${(err as Error).message}`;
  }
  const parsed = WorkerConfig.safeParse(raw ?? {});
  return parsed.success ? parsed.data : `ENG_WORKER_CONFIG: ${describeZodError(parsed.error)}`;
}

export function parseCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): ParsedCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'engine-url': { type: 'string', short: 'e' },
        'no-stdio': { type: 'boolean' },
        'expose-all': { type: 'boolean' },
        'no-builtins': { type: 'boolean' },
        'http-builtins': { type: 'boolean' },
        tier: { type: 'string' },
        debug: { type: 'boolean', short: 'd' },
        'max-sessions': { type: 'string' },
        'max-session-bytes': { type: 'string' },
        'session-idle-ms': { type: 'string' },
        'session-protect-ms': { type: 'string' },
        'http-path': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    }));
  } catch (err) {
    return { kind: 'error', message: (err as Error).message };
  }
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const config = readWorkerConfig(env.ENG_WORKER_CONFIG);
  if (typeof config === 'string') return { kind: 'error', message: config };
  const tier = (values.tier as string | undefined) ?? config.tier;
  if (tier !== undefined && tier.trim() === '') return { kind: 'error', message: '--tier needs a non-empty name' };
  const limits = {
    maxSessions: intFlag('--max-sessions', values['max-sessions'] as string | undefined, 1),
    maxSessionBytes: intFlag('--max-session-bytes', values['max-session-bytes'] as string | undefined, MIN_SESSION_BYTES),
    sessionIdleMs: intFlag('--session-idle-ms', values['session-idle-ms'] as string | undefined, 1000),
    sessionProtectMs: intFlag('--session-protect-ms', values['session-protect-ms'] as string | undefined, 0),
  };
  for (const value of Object.values(limits)) if (typeof value === 'string') return { kind: 'error', message: value };
  const httpPath = ((values['http-path'] as string | undefined) ?? config.http_path ?? 'mcp').replace(/^\/+/, '');
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(httpPath)) {
    return { kind: 'error', message: `--http-path must be a path of letters, digits, _ and - segments, got "${httpPath}"` };
  }
  const engineUrl = (values['engine-url'] as string | undefined) ?? config.engine_url ?? env.ENG_URL ?? DEFAULT_ENGINE_URL;
  if (!/^wss?:\/\//.test(engineUrl))
    return { kind: 'error', message: `--engine-url must be a ws:// or wss:// URL, got "${redactUrl(engineUrl)}"` };
  return {
    kind: 'run',
    options: {
      engineUrl,
      noStdio: Boolean(values['no-stdio'] ?? config.no_stdio ?? false),
      exposeAll: Boolean(values['expose-all'] ?? config.expose_all ?? false),
      noBuiltins: Boolean(values['no-builtins'] ?? config.no_builtins ?? false),
      httpBuiltins: Boolean(values['http-builtins'] ?? config.http_builtins ?? false),
      tier,
      debug: Boolean(values.debug ?? config.debug ?? false),
      allowedOrigins: config.allowed_origins ?? [],
      allowedHosts: config.allowed_hosts ?? [],
      maxBodyBytes: config.max_body_bytes ?? 4 * 1024 * 1024,
      invocationTimeoutMs: config.invocation_timeout_ms ?? 30_000,
      pollMs: config.poll_ms ?? 5_000,
      sseAfterMs: config.sse_after_ms ?? 10_000,
      workerName: env.ENG_WORKER_NAME || 'eng-mcp',
      maxSessions: (limits.maxSessions as number | undefined) ?? config.max_sessions ?? SESSION_DEFAULTS.maxSessions,
      maxSessionBytes: (limits.maxSessionBytes as number | undefined) ?? config.max_session_bytes ?? SESSION_DEFAULTS.maxSessionBytes,
      sessionIdleMs: (limits.sessionIdleMs as number | undefined) ?? config.session_idle_ms ?? SESSION_DEFAULTS.sessionIdleMs,
      sessionProtectMs: (limits.sessionProtectMs as number | undefined) ?? config.session_protect_ms ?? SESSION_DEFAULTS.sessionProtectMs,
      replayBytes: config.replay_bytes ?? SESSION_DEFAULTS.replayBytes,
      httpPath,
    },
  };
}
