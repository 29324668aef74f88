import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect, type EngClient } from '@eng/sdk';

// Test support shared by the chat workers' tests: run a role through the real launcher
// (src/main.ts, what `eng-chat <role>` and the engine's supervisor run) against an engine on
// loopback, and record the events a trigger type delivers. Only tests import this file.

const LAUNCHER = resolve(dirname(fileURLToPath(import.meta.url)), '../main.ts');
const TSX = pathToFileURL(join(resolve(dirname(fileURLToPath(import.meta.url)), '../../../..'), 'node_modules/tsx/dist/loader.mjs')).href;

export interface RoleProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once the worker printed its ready line. */
  ready: Promise<void>;
  /** SIGTERM and wait for the exit (SIGKILL after 8 s); resolves the exit code. */
  stop(): Promise<number | null>;
}

export function startRole(busUrl: string, role: string, env: Record<string, string> = {}): RoleProcess {
  let output = '';
  const child = spawn(process.execPath, ['--import', TSX, LAUNCHER, role], {
    env: { ...process.env, ENG_URL: busUrl, ENG_TRACING: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} did not get ready in 30 s; output:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/: ready — /.test(output)) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} exited with ${code} before it was ready; output:\n${output}`));
    });
  });
  ready.catch(() => undefined);
  return {
    child,
    output: () => output,
    ready,
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
      return exited.finally(() => clearTimeout(timer));
    },
  };
}

/** A test client on the bus, ready. */
export async function testClient(busUrl: string, name = 'chat-test'): Promise<EngClient> {
  const client = connect(busUrl, { name, tracing: false, reconnect: { maxRetries: 0 } });
  await client.ready({ timeoutMs: 10_000 });
  return client;
}

/** Bind `type` with `config` to a fresh function of `client` and collect what it receives. */
export async function recordEvents<T = any>(
  client: EngClient,
  type: string,
  config: unknown = {},
): Promise<{ events: T[]; unbind(): void }> {
  const events: T[] = [];
  const id = `test::on::${type}::${Math.random().toString(36).slice(2)}`;
  const fn = client.registerFunction(id, (input: T) => {
    // the engine adds the sender's worker id to worker-to-worker payloads (engine-protocol §2.3.9)
    const { _caller_worker_id: _, ...event } = input as Record<string, unknown>;
    events.push(event as T);
    return {};
  });
  const trigger = client.registerTrigger({ type, function_id: id, config });
  // the binding is live once the engine answered a call made after it (frames are ordered)
  await client.call('engine::functions::list', {});
  return {
    events,
    unbind() {
      trigger.unregister();
      fn.unregister();
    },
  };
}
