import type { Readable, Writable } from 'node:stream';
import { redactUrl } from '@eng/protocol';
import { connect, type EngClient } from '@eng/sdk';
import { BuiltinHandlers } from './builtin-handlers.ts';
import { builtinsVisible } from './builtins.ts';
import { ContributionService } from './contributions.ts';
import { directDispatch } from './direct-dispatch.ts';
import { engineFunctionIds, registerEngineFunctions } from './engine-functions.ts';
import { EngineView } from './engine-view.ts';
import type { ExposurePolicy } from './exposure.ts';
import { HttpEndpoint } from './http/endpoint.ts';
import { ModernHttp, paramHeaderRefusal } from './http/modern-http.ts';
import { Invoker } from './invoker.ts';
import { Leg } from './leg.ts';
import { type Log, stderrLog } from './log.ts';
import { type ModernAnswer, ModernServer, responseOf } from './modern.ts';
import { MrtrStore } from './mrtr.ts';
import type { McpOptions } from './options.ts';
import { BUILTIN_PROMPT_NAMES } from './prompts.ts';
import { ResourceService } from './resources.ts';
import { createSession, SERVER_VERSION, type ServerDeps } from './server.ts';
import { SessionHub } from './sessions.ts';
import { StdioTransport } from './stdio-transport.ts';
import { TaskService } from './tasks.ts';
import { ToolService } from './tools.ts';
import { ChangeWatcher } from './watcher.ts';
import { WorkerManager } from './worker-manager.ts';

// Wires eng-mcp together: one engine connection (@eng/sdk), then stdio (default) or the HTTP
// endpoint (--no-stdio), seed §1 and §4.4.

export interface RunningMcp {
  client: EngClient;
  shutdown(): Promise<void>;
}

export interface RunIo {
  stdin: Readable;
  stdout: Writable;
  log?: Log;
}

export async function runMcp(options: McpOptions, io: RunIo = { stdin: process.stdin, stdout: process.stdout }): Promise<RunningMcp> {
  const log = io.log ?? stderrLog(options.debug);
  // the engine URL as logs and clients see it: without credentials (the log redacts again)
  const shownUrl = redactUrl(options.engineUrl);
  const policy: ExposurePolicy = { exposeAll: options.exposeAll, tier: options.tier };
  const flags = { noBuiltins: options.noBuiltins, httpBuiltins: options.httpBuiltins };
  if (options.exposeAll) {
    log.warn('--expose-all is set: every function outside the hard floor is exposed as a tool, opted in or not (development only)');
  }
  if (options.noBuiltins && options.httpBuiltins) log.warn('--no-builtins wins over --http-builtins: built-in tools are hidden everywhere');

  const client = connect(options.engineUrl, {
    name: options.workerName,
    description: 'MCP surface: opted-in functions as MCP tools',
    invocationTimeoutMs: options.invocationTimeoutMs,
    // an interactive surface: come back quickly once the engine is up again
    reconnect: { initialDelayMs: 250, maxDelayMs: 5000 },
    // stdout is the protocol: the SDK must log through us (stderr)
    logger: {
      debug: (m) => log.debug(`sdk: ${m}`),
      info: (m) => log.debug(`sdk: ${m}`),
      warn: (m) => log.warn(`sdk: ${m}`),
      error: (m) => log.error(`sdk: ${m}`),
    },
  });
  const view = new EngineView(client);
  const hub = new SessionHub();
  const workers = new WorkerManager(options.engineUrl, log, (w) => {
    const status = w.exited?.code ?? w.exited?.signal;
    hub.log('warning', { message: `worker ${w.id} (${w.functionId}) exited with status ${status}`, worker: w.id }, 'eng-mcp');
  });
  const builtins = new BuiltinHandlers({ client, view, policy, workers, log });
  const ids = engineFunctionIds();
  const invoker = new Invoker({
    client,
    view,
    policy,
    invocationTimeoutMs: options.invocationTimeoutMs,
    onStaleMirror: () => watcher.schedule(),
  });
  const tools = new ToolService({
    view,
    policy,
    flags,
    builtins,
    hub,
    invoker,
    functionIds: ids,
    onDegradedList: () => watcher.degradedListServed(),
  });
  const contributions = new ContributionService({
    view,
    policy,
    invoker,
    log,
    reservedPrompts: BUILTIN_PROMPT_NAMES,
    onDegradedList: () => watcher.degradedContributionsServed(),
  });
  const transport = options.noStdio ? 'http' : 'stdio';
  const resources = new ResourceService(view, policy);
  const watcher = new ChangeWatcher(
    view,
    policy,
    hub,
    resources,
    () => ({
      server: { name: 'eng-mcp', version: SERVER_VERSION },
      transport,
      engineUrl: options.engineUrl,
      policy,
      builtinsVisible: builtinsVisible(transport, flags),
      functionIds: ids,
    }),
    log,
    contributions,
  );
  const deps: ServerDeps = {
    tools,
    view,
    policy,
    flags,
    hub,
    log,
    engineUrl: options.engineUrl,
    functionIds: ids,
    contributions,
    onSubscribe: (uri) => watcher.prime(uri),
  };
  registerEngineFunctions(client, hub, ids, () => watcher.schedule(), { clientRequestTimeoutMs: options.invocationTimeoutMs });
  // 2026-07-28: stateless requests beside the 2025 sessions, on both transports
  const tasks = new TaskService({ client, view, instance: ids.instance, log, onChange: (taskId, task) => hub.taskChanged(taskId, task) });
  tasks.register();
  const mrtr = new MrtrStore({
    client,
    hub,
    tools,
    contributions,
    functionIds: ids,
    instance: ids.instance,
    waitMs: options.invocationTimeoutMs,
    tasks,
  });
  mrtr.register();
  const modern = new ModernServer({ ...deps, mrtr, tasks });

  let endpoint: HttpEndpoint | undefined;
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      watcher.stop();
      mrtr.close();
      tasks.close();
      builtins.unregisterAll();
      await workers.stopAll();
      await endpoint?.closeAll();
      await client.close();
    })();
    return stopping;
  };
  // a child must never outlive us, whatever way we end
  process.once('exit', () => workers.killAllNow());

  if (options.noStdio) {
    const modernHttp = new ModernHttp(modern, options, async (message, headers) => {
      const p = (message.params ?? {}) as { name?: unknown; arguments?: unknown };
      if (typeof p.name !== 'string') return undefined;
      const schema = await tools.inputSchemaOfTool(p.name);
      return schema ? paramHeaderRefusal(schema, p.arguments, headers) : undefined;
    });
    endpoint = new HttpEndpoint(client, hub, (id) => createSession('http', deps, id), options, log, modernHttp, options.httpPath);
    endpoint.register();
    log.info(`MCP Streamable HTTP registered: POST/GET/DELETE /${options.httpPath} on the engine HTTP port (engine ${shownUrl})`);
  } else {
    const session = createSession('stdio', deps, 'stdio');
    const inFlight = new Map<string | number, Leg>();
    const stdio = new StdioTransport(io.stdin, io.stdout, () => session.protocolVersion, directDispatch(session.server), {
      request(message, write) {
        const leg = new Leg();
        inFlight.set(message.id, leg);
        const notify = (m: unknown) => {
          if (!leg.cancelled) write(m);
        };
        void modern
          .request(message, { transport: 'stdio', notify, leg })
          .catch((err): ModernAnswer => ({ error: { status: 200, code: -32603, message: (err as Error).message } }))
          .then((answer) => {
            inFlight.delete(message.id);
            // spec basic/patterns/cancellation: a cancelled request is not answered
            if (!leg.cancelled) write(responseOf(message.id, answer));
          });
      },
      cancel(id) {
        const leg = inFlight.get(id);
        if (!leg) return false;
        inFlight.delete(id);
        leg.cancel();
        return true;
      },
    });
    stdio.onclose = () => {
      hub.remove(session);
      log.info('stdin closed; shutting down');
      void shutdown().finally(() => process.exit(0));
    };
    await session.server.connect(stdio);
    hub.add(session);
    log.info(`MCP server on stdio (engine ${shownUrl})`);
  }
  watcher.start(options.pollMs);
  // the connection's state changes what clients can see: tell them (as MCP log messages too)
  let lost = false;
  let everConnected = false;
  client.on('connected', () => {
    // said once, whenever the first connection comes (the engine may start long after us)
    if (!everConnected) log.info(`connected to the eng engine at ${shownUrl}`);
    everConnected = true;
    if (lost) hub.log('info', { message: `reconnected to the eng engine at ${shownUrl}` }, 'eng-mcp');
    lost = false;
    watcher.schedule();
  });
  client.on('disconnected', ({ reason }) => {
    lost = true;
    log.warn(`lost the connection to the eng engine${reason ? ` (${reason})` : ''}; reconnecting`);
    hub.log('warning', { message: 'lost the connection to the eng engine; reconnecting' }, 'eng-mcp');
    watcher.schedule();
  });

  client.ready({ timeoutMs: 5000 }).then(
    () => undefined,
    () => {
      if (!everConnected) log.warn(`no connection to the eng engine at ${shownUrl} yet; retrying in the background`);
    },
  );
  return { client, shutdown };
}
