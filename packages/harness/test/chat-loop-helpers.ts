import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { type EngineProcess, REPO_ROOT, startEngine, tsEntryArgs, waitFor } from '../../../test/harness.ts';

// Helpers for the router / provider / context / harness tests: a real engine, the chat workers as
// real processes (the same entry points the launcher runs), and a test client on the bus.

const SRC = join(REPO_ROOT, 'packages/harness/src');

export const WORKERS = {
  router: join(SRC, 'router/worker.ts'),
  'provider-openai': join(SRC, 'providers/openai/worker.ts'),
  'provider-anthropic': join(SRC, 'providers/anthropic/worker.ts'),
  context: join(SRC, 'context/worker.ts'),
  harness: join(SRC, 'harness/worker.ts'),
  session: join(SRC, 'session/worker.ts'),
  approval: join(SRC, 'approval/worker.ts'),
} as const;
export type Role = keyof typeof WORKERS;

/** Each role's node arguments, resolved once: its compiled file (half the CPU of tsx per start) calling main(). */
const ROLE_ARGS = Object.fromEntries(
  await Promise.all(Object.entries(WORKERS).map(async ([role, file]) => [role, await tsEntryArgs(file, { callMain: true })])),
) as Record<Role, string[]>;

/** Engine modules the chat stack needs: state (turn records), observability (traces). */
export function chatEngineYaml(options: { stateFile?: string; extra?: string } = {}): string {
  const store = options.stateFile
    ? `adapter: { name: kv, config: { store_method: file_based, file_path: ${options.stateFile} } }`
    : 'adapter: { name: kv, config: { store_method: in_memory } }';
  return [
    '  - name: eng-state',
    '    config:',
    `      ${store}`,
    '  - name: eng-observability',
    '    config:',
    '      logs_console_output: false',
    '  - name: eng-configuration',
    options.extra ?? '',
  ].join('\n');
}

export function startChatEngine(options: { stateFile?: string; extra?: string; dataDir?: string } = {}): Promise<EngineProcess> {
  return startEngine({ workersYaml: chatEngineYaml(options), dataDir: options.dataDir });
}

export interface WorkerProcess {
  role: Role;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** Every variable that could hand a worker a real credential is cleared unless the test sets it. */
const CLEAN_ENV = {
  OPENAI_API_KEY: '',
  OPENAI_BASE_URL: '',
  ANTHROPIC_API_KEY: '',
  ANTHROPIC_BASE_URL: '',
};

export function startWorker(engine: EngineProcess, role: Role, env: Record<string, string> = {}): WorkerProcess {
  let output = '';
  const child = spawn(process.execPath, ROLE_ARGS[role], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...CLEAN_ENV, ENG_URL: engine.busUrl, ENG_WORKER_NAME: role, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    role,
    child,
    output: () => output,
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (!alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function testClient(engine: EngineProcess, name = 'chat-test'): Promise<EngClient> {
  const client = connect(engine.busUrl, { name, invocationTimeoutMs: 20_000 });
  await client.ready({ timeoutMs: 10_000 });
  return client;
}

/** Wait until every function id is registered on the engine. */
export async function waitForFunctions(client: EngClient, ids: string[], timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const listed = await client.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
        include_internal: true,
      });
      const have = new Set(listed.functions.map((f) => f.function_id));
      return ids.every((id) => have.has(id));
    },
    timeoutMs,
    100,
  );
}

/**
 * Record every payload a trigger type delivers, through a function of the test client. Resolves
 * once the binding is live: the engine answered a call made after it, so it has handed the binding
 * to the type's provider before anything the test does next.
 */
export async function collect<T = any>(
  client: EngClient,
  triggerType: string,
  config: unknown = {},
): Promise<{ events: T[]; stop(): void }> {
  const events: T[] = [];
  const functionId = `test::collect::${triggerType}::${Math.random().toString(36).slice(2)}`;
  const fn = client.registerFunction(functionId, async (payload) => {
    events.push(payload as T);
    return {};
  });
  const trigger = client.registerTrigger({ type: triggerType, function_id: functionId, config });
  await client.call('engine::functions::list', { prefix: 'test::' });
  return {
    events,
    stop() {
      trigger.unregister();
      fn.unregister();
    },
  };
}

export { waitFor };

/** The error a call fails with; a call that succeeds fails the test. */
export async function failure(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  let result: unknown;
  try {
    result = await call;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(result)}`);
}

/** `router::chat` through a channel the test reads: every frame the provider wrote, and the result. */
export async function chatThroughChannel(
  client: EngClient,
  payload: Record<string, unknown>,
  options: { onFrame?: (frame: any) => void } = {},
): Promise<{ frames: any[]; result: any }> {
  const channel = await client.createChannel(1024);
  const frames: any[] = [];
  const reading = (async () => {
    for await (const frame of channel.reader) {
      if (typeof frame !== 'string') continue;
      const parsed = JSON.parse(frame);
      frames.push(parsed);
      options.onFrame?.(parsed);
    }
  })();
  const result = await client.call('router::chat', { ...payload, writer_ref: channel.writerRef }, { timeoutMs: 60_000 });
  // the writer closes after its last frame; a provider that never wrote leaves nothing to wait for
  await Promise.race([reading.catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
  channel.reader.close();
  return { frames, result };
}

export interface ChatStack {
  engine: EngineProcess;
  client: EngClient;
  fake: import('./fakes/openai.ts').FakeOpenAI;
  workers: Partial<Record<Role, WorkerProcess>>;
  /** (Re)start one role with the stack's environment. */
  start(role: Role, env?: Record<string, string>): WorkerProcess;
  stop(): Promise<void>;
}

/**
 * A real engine with every chat worker as its own process; the OpenAI-compatible provider talks to
 * the fake server through OPENAI_BASE_URL, with OPENAI_API_KEY in the router's environment.
 */
export async function startChatStack(
  options: {
    roles?: Role[];
    /** The router's OPENAI_API_KEY; null: no credential anywhere (the test provides one). */
    key?: string | null;
    stateFile?: string;
    dataDir?: string;
    env?: Partial<Record<Role, Record<string, string>>>;
    /** More engine modules (YAML entries under `workers:`), e.g. the queue and pub/sub. */
    engineExtra?: string;
  } = {},
): Promise<ChatStack> {
  const { FakeOpenAI } = await import('./fakes/openai.ts');
  const fake = await new FakeOpenAI().start();
  fake.models = ['gpt-4o', 'gpt-4o-mini', 'local-small'];
  const engine = await startChatEngine({ stateFile: options.stateFile, dataDir: options.dataDir, extra: options.engineExtra });
  const client = await testClient(engine);
  const key = options.key === undefined ? 'sk-stack-test-key-0123456789' : options.key;
  const roles = options.roles ?? ['session', 'router', 'provider-openai', 'context', 'harness'];
  const baseEnv: Partial<Record<Role, Record<string, string>>> = {
    router: key === null ? {} : { OPENAI_API_KEY: key, OPENAI_BASE_URL: fake.baseUrl },
  };
  const workers: Partial<Record<Role, WorkerProcess>> = {};
  const start = (role: Role, env: Record<string, string> = {}) => {
    const worker = startWorker(engine, role, { ...baseEnv[role], ...options.env?.[role], ...env });
    workers[role] = worker;
    return worker;
  };
  for (const role of roles) start(role);
  const required = ['session::append', 'router::chat', 'harness::send'].filter((id) =>
    roles.includes(id.startsWith('session') ? 'session' : id.startsWith('router') ? 'router' : 'harness'),
  );
  await waitForFunctions(client, required, 30_000);
  if (roles.includes('provider-openai') && key !== null) {
    await waitFor(async () => (await client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 30_000, 100);
  }
  return {
    engine,
    client,
    fake,
    workers,
    start,
    async stop() {
      await Promise.all(Object.values(workers).map((w) => w?.stop()));
      await client.close();
      await engine.stop();
      await fake.stop();
    },
  };
}

/** Every entry of a session's active path (messages and custom entries), oldest first. */
export async function transcript(client: EngClient, sessionId: string): Promise<any[]> {
  const page = await client.call<{ messages: any[] }>('session::messages', { session_id: sessionId, limit: 500, include_custom: true });
  return page.messages;
}
