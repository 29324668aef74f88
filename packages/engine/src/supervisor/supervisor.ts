import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, renameSync, rmSync, type WriteStream, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { WorkerEntry } from '../config/load.ts';
import { type Logger, redact } from '../log.ts';
import { credentialEnvValues } from '../modules/observability/secret-registry.ts';
import { reasonOf, StderrTail, secretScrubber } from './stderr-tail.ts';

/** How to run one external worker. */
export interface LaunchSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * Open a Node IPC channel to the worker (fd 3). The console worker uses it to hand accepted
   * `/ws` sockets to the engine; `ENG_BUS_HANDOFF` tells it which bus URL takes them.
   */
  ipc?: boolean;
}

/** A message (and optional handle, such as a socket) a worker sent over its IPC channel. */
export type WorkerMessageListener = (name: string, message: unknown, handle: unknown) => void;

export interface SupervisedState {
  name: string;
  pid: number | null;
  running: boolean;
  restarts: number;
  lastExit: { code: number | null; signal: string | null; atMs: number } | null;
  /** Where its output goes; null for an entry that could not be launched at all. */
  logFile: string | null;
  startedAtMs: number | null;
  /** Where the worker serves once it reported ready (console UI, MCP endpoint); null until then. */
  url: string | null;
  /**
   * `running`; `restarting` (exited, relaunch scheduled); `crash_loop` (it keeps exiting soon after
   * each start); `failed_to_launch` (the entry cannot be resolved, or its command cannot be executed);
   * `stopped` (the engine is stopping).
   */
  status: SupervisedStatus;
  /** Why it is not running, when known: the config entry cannot be resolved, or the command failed to execute. */
  error: string | null;
  /** Runs in a row that ended within 30 s of their start. */
  quickExits: number;
  /** When the next launch attempt is due, while one is scheduled. */
  nextRestartAtMs: number | null;
  /** The command line it is launched with (credentials removed); null when it cannot be launched. */
  command: string | null;
  /**
   * The last lines (at most 20) its latest run that wrote any printed on stderr, the reason it
   * failed; URL credentials and the values of credential-named variables and configuration
   * secrets replaced by `[REDACTED]`.
   */
  stderrTail: string[];
}

export type SupervisedStatus = 'running' | 'restarting' | 'crash_loop' | 'failed_to_launch' | 'stopped';

/** Runs in a row that each ended within HEALTHY_AFTER_MS make a crash loop. */
export const CRASH_LOOP_AFTER = 3;

/** A supervised worker became ready at `url`, or stopped serving (`url` null). */
export type ReadyListener = (event: { name: string; url: string | null }) => void;

/** Resolves a config entry to a launch spec, or explains why it cannot be launched. */
export type Resolver = (entry: WorkerEntry) => {
  spec?: Omit<LaunchSpec, 'env' | 'name'> & { env?: Record<string, string> };
  reason?: string;
};

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
const HEALTHY_AFTER_MS = 30_000;
const STOP_GRACE_MS = 5_000;

/**
 * Launches the external workers of config.yaml (console, mcp, the demo app, …), restarts them
 * with exponential backoff when they crash, writes their output to a log file each, and stops
 * them when the engine stops.
 */
export class Supervisor {
  private readonly children = new Map<string, Supervised>();
  /** Configured entries that cannot be launched at all, with the reason (shown by engine::supervisor::list). */
  private readonly unlaunchable = new Map<string, string>();
  private readonly urls = new Map<string, string>();
  private readonly readyListeners = new Set<ReadyListener>();
  private stopping = false;

  constructor(
    private readonly options: {
      busUrl: string;
      logDir: string;
      configDir: string;
      resolver: Resolver;
      log: Logger;
      onMessage?: WorkerMessageListener;
      /** The engine's HTTP and streams URLs, passed to every worker as ENG_HTTP_URL / ENG_STREAMS_URL. */
      addresses?: { http?: string; streams?: string };
      /**
       * Where the running children are recorded (pid and command line), so that an engine started
       * after one that was killed (no chance to stop its workers) stops the ones left running.
       */
      stateFile?: string;
      /** Secret values the engine knows besides the environment (configuration secrets), cut out of stderr tails. */
      secretValues?: () => Iterable<string>;
    },
  ) {}

  start(entries: WorkerEntry[]): void {
    this.reapLeftovers();
    for (const entry of entries) {
      const resolved = this.options.resolver(entry);
      if (!resolved.spec) {
        const reason = resolved.reason ?? 'unknown worker';
        this.unlaunchable.set(entry.name, reason);
        this.options.log.warn(`worker "${entry.name}" is configured but cannot be launched: ${reason}`);
        continue;
      }
      const spec: LaunchSpec = {
        name: entry.name,
        command: resolved.spec.command,
        args: resolved.spec.args,
        cwd: resolved.spec.cwd,
        ipc: resolved.spec.ipc === true,
        env: {
          ENG_URL: this.options.busUrl,
          ENG_ENGINE_URL: this.options.busUrl,
          ENG_WORKER_NAME: entry.name,
          ENG_WORKER_CONFIG: JSON.stringify(entry.config ?? {}),
          ENG_ENGINE_PID: String(process.pid),
          // where the engine's HTTP triggers and streams socket listen, for workers that serve them (console)
          ...(this.options.addresses?.http ? { ENG_HTTP_URL: this.options.addresses.http } : {}),
          ...(this.options.addresses?.streams ? { ENG_STREAMS_URL: this.options.addresses.streams } : {}),
          ...(resolved.spec.ipc ? { ENG_BUS_HANDOFF: this.options.busUrl } : {}),
          ...resolved.spec.env,
          ...(entry.env ?? {}),
        },
      };
      // the worker sees the engine's environment plus its own: a key from either may be echoed
      const envSecrets = credentialEnvValues({ ...process.env, ...spec.env });
      const scrub = secretScrubber(() => [...envSecrets, ...(this.options.secretValues?.() ?? [])]);
      const supervised = new Supervised(
        spec,
        join(this.options.logDir, `${safeName(entry.name)}.log`),
        this.options.log.child(entry.name),
        () => this.stopping,
        this.options.onMessage,
        () => this.saveState(),
        new StderrTail(scrub),
      );
      this.children.set(entry.name, supervised);
      supervised.launch();
    }
  }

  states(): SupervisedState[] {
    const launched = [...this.children.values()].map((c) => ({ ...c.state(this.stopping), url: this.urls.get(c.name) ?? null }));
    const failed = [...this.unlaunchable].map(
      ([name, reason]): SupervisedState => ({
        name,
        pid: null,
        running: false,
        restarts: 0,
        lastExit: null,
        logFile: null,
        startedAtMs: null,
        url: null,
        status: 'failed_to_launch',
        error: reason,
        quickExits: 0,
        nextRestartAtMs: null,
        command: null,
        stderrTail: [],
      }),
    );
    return [...launched, ...failed];
  }

  /** Names of the workers this supervisor launched. */
  names(): string[] {
    return [...this.children.keys()];
  }

  /** Record where a worker serves (null: it stopped serving) and tell the listeners when it changes. */
  setUrl(name: string, url: string | null): void {
    if (!this.children.has(name) || (this.urls.get(name) ?? null) === url) return;
    if (url) this.urls.set(name, url);
    else this.urls.delete(name);
    for (const listener of this.readyListeners) listener({ name, url });
  }

  onReady(listener: ReadyListener): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.children.values()].map((c) => c.stop()));
    if (this.options.stateFile) rmSync(this.options.stateFile, { force: true });
  }

  /** Record the children that run now (atomically: a crash mid-write leaves the previous record). */
  private saveState(): void {
    const file = this.options.stateFile;
    if (!file || this.stopping) return;
    const running = [...this.children.values()].flatMap((c) => c.record() ?? []);
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, `${JSON.stringify({ engine_pid: process.pid, workers: running }, null, 2)}\n`);
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.options.log.warn(`cannot record the running workers in ${file}: ${(err as Error).message}`);
    }
  }

  /**
   * Stop the workers a previous engine left running (it was killed before it could stop them): a
   * recorded pid is signalled only while its command line is still the recorded one, so a pid the
   * system has since given to another program is never touched.
   */
  private reapLeftovers(): void {
    const file = this.options.stateFile;
    if (!file) return;
    let recorded: { engine_pid?: number; workers?: ChildRecord[] };
    try {
      recorded = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return; // nothing recorded (clean stop, first start) or unreadable: nothing to reap
    }
    if (recorded.engine_pid !== undefined && recorded.engine_pid !== process.pid && processCommandLine(recorded.engine_pid)) {
      // the engine that recorded them still runs (another engine on this data directory): its workers are its own
      return;
    }
    for (const worker of recorded.workers ?? []) {
      if (typeof worker.pid !== 'number' || typeof worker.cmdline !== 'string') continue;
      if (processCommandLine(worker.pid) !== worker.cmdline) continue;
      this.options.log.warn(`stopping worker "${worker.name}" (pid ${worker.pid}) left running by an engine that did not shut down`);
      try {
        process.kill(worker.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(file, { force: true });
  }
}

/** One running child as recorded in the state file. */
interface ChildRecord {
  name: string;
  pid: number;
  cmdline: string;
}

/** A process's command line (Linux /proc), or undefined when it does not run or cannot be read. */
function processCommandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

class Supervised {
  private child?: ChildProcess;
  private cmdline?: string;
  private restarts = 0;
  private quickExits = 0;
  private error: string | null = null;
  private nextRestartAtMs: number | null = null;
  private backoffMs = MIN_BACKOFF_MS;
  private startedAtMs: number | null = null;
  private lastExit: SupervisedState['lastExit'] = null;
  private timer?: NodeJS.Timeout;
  private logStream: WriteStream;

  constructor(
    private readonly spec: LaunchSpec,
    private readonly logFile: string,
    private readonly log: Logger,
    private readonly isStopping: () => boolean,
    private readonly onMessage?: WorkerMessageListener,
    private readonly onChange: () => void = () => undefined,
    private readonly stderrTail: StderrTail = new StderrTail(secretScrubber(() => [])),
  ) {
    mkdirSync(dirname(logFile), { recursive: true });
    this.logStream = createWriteStream(logFile, { flags: 'a' });
  }

  launch(): void {
    const { command, args, cwd, env } = this.spec;
    this.logStream.write(`\n--- ${new Date().toISOString()} starting ${redact([command, ...args].join(' '))}\n`);
    const stdio: Array<'ignore' | 'pipe' | 'ipc'> = this.spec.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio });
    this.child = child;
    if (this.spec.ipc) {
      child.on('message', (message, handle) => this.onMessage?.(this.spec.name, message, handle));
    }
    // 'spawn' comes after the exec: /proc then shows the worker's own command line
    child.once('spawn', () => {
      this.cmdline = child.pid ? processCommandLine(child.pid) : undefined;
      this.onChange();
    });
    this.startedAtMs = Date.now();
    child.stdout?.on('data', (chunk: Buffer) => this.logStream.write(redact(chunk.toString())));
    this.stderrTail.startRun();
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.logStream.write(redact(text));
      this.stderrTail.write(text);
    });
    child.on('error', (err) => {
      // no pid: the command could not be executed (ENOENT, EACCES) and no 'exit' follows
      if (child.pid !== undefined || this.child !== child) {
        this.log.error(`worker process error: ${err.message}`);
        return;
      }
      const first = this.error === null;
      this.error = `failed to launch ${command}: ${(err as NodeJS.ErrnoException).code ?? err.message}`;
      this.logStream.write(`${this.error}\n`);
      if (first) this.log.error(`failed to launch: ${err.message}`);
      this.ended(null, null, first);
    });
    child.on('exit', (code, signal) => {
      this.error = null;
      // stderr may still hold the worker's last words: read them (briefly: a grandchild can keep
      // the pipe open) before saying why it ended
      const stderr = child.stderr;
      const drained =
        stderr && !stderr.readableEnded
          ? new Promise<void>((r) => {
              const timer = setTimeout(r, 200);
              stderr.once('end', () => {
                clearTimeout(timer);
                r();
              });
            })
          : Promise.resolve();
      void drained.then(() => {
        this.stderrTail.flush();
        this.ended(code, signal, true);
      });
    });
    this.log.info(`started (pid ${child.pid}); output in ${this.logFile}`);
  }

  /** The child is gone: record how, then relaunch after the backoff unless the engine is stopping. */
  private ended(code: number | null, signal: string | null, logIt: boolean): void {
    this.lastExit = { code, signal, atMs: Date.now() };
    this.child = undefined;
    this.cmdline = undefined;
    this.onChange();
    if (this.isStopping()) return;
    const uptime = Date.now() - (this.startedAtMs ?? Date.now());
    if (uptime > HEALTHY_AFTER_MS) {
      this.backoffMs = MIN_BACKOFF_MS;
      this.quickExits = 0;
    } else this.quickExits++;
    this.restarts++;
    if (logIt) {
      const how = this.error ?? `exited (${signal ?? `code ${code}`})`;
      const loop = this.quickExits >= CRASH_LOOP_AFTER ? ` (crash loop: ${this.quickExits} quick exits in a row)` : '';
      // the line names the worker and says why (the console's log view shows the text, not the scope)
      const reason = this.error ? undefined : reasonOf(this.stderrTail.snapshot());
      const who = `worker "${this.spec.name}"${reason ? `: ${reason}` : ''}`;
      this.log.warn(`${how}; restarting in ${this.backoffMs} ms${loop} — ${who} (log: ${this.logFile})`);
    }
    this.nextRestartAtMs = Date.now() + this.backoffMs;
    this.timer = setTimeout(() => {
      this.nextRestartAtMs = null;
      this.launch();
    }, this.backoffMs);
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
  }

  get name(): string {
    return this.spec.name;
  }

  /** The running child as the state file keeps it; undefined while none runs. */
  record(): ChildRecord | undefined {
    const pid = this.child?.pid;
    return pid && this.cmdline ? { name: this.spec.name, pid, cmdline: this.cmdline } : undefined;
  }

  state(stopping = false): Omit<SupervisedState, 'url'> {
    const running = !!this.child && this.child.exitCode === null && this.child.pid !== undefined;
    // a run that has lasted past the healthy mark ends the loop, even before it ever exits
    const healthy = running && Date.now() - (this.startedAtMs ?? Date.now()) > HEALTHY_AFTER_MS;
    const quickExits = healthy ? 0 : this.quickExits;
    const status: SupervisedStatus = stopping
      ? 'stopped'
      : running
        ? quickExits >= CRASH_LOOP_AFTER && !healthy
          ? 'crash_loop'
          : 'running'
        : this.error
          ? 'failed_to_launch'
          : quickExits >= CRASH_LOOP_AFTER
            ? 'crash_loop'
            : 'restarting';
    return {
      name: this.spec.name,
      pid: running ? (this.child?.pid ?? null) : null,
      running,
      restarts: this.restarts,
      lastExit: this.lastExit,
      logFile: this.logFile,
      startedAtMs: this.startedAtMs,
      status,
      error: this.error,
      quickExits,
      nextRestartAtMs: this.nextRestartAtMs,
      command: redact([this.spec.command, ...this.spec.args].join(' ')),
      stderrTail: this.stderrTail.snapshot(),
    };
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(force);
    }
    await new Promise<void>((r) => this.logStream.end(() => r()));
  }
}

function safeName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_.-]/g, '_');
}

/** Resolve a `command` relative to the config file's directory when it looks like a path. */
export function resolveCommandPath(command: string, configDir: string): string {
  if (isAbsolute(command) || !command.includes('/')) return command;
  return resolve(configDir, command);
}
