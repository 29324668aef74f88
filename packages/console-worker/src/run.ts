import { createConsoleApi } from '@eng/console/console-api';
import { hostAllowed } from '@eng/console/host-check';
import { redactText, redactUrl } from '@eng/console/redact';
import { connect, type EngClient } from '@eng/sdk';
import { createBusHandoff } from './bus-handoff.ts';
import type { WorkerSettings } from './config.ts';
import { workerConfigBody } from './config-body.ts';
import { embeddedAssets } from './embedded.ts';
import { type ConsoleHttpServer, type ServerLogger, startHttpServer } from './server.ts';
import { type ConsoleStatus, registerStatus } from './status.ts';
import { WORKER_VERSION } from './version.ts';

/** A running console worker: the HTTP server on its port and the engine session that serves `console::status`. */
export interface RunningWorker {
  http: ConsoleHttpServer;
  client: EngClient;
  status(): ConsoleStatus;
  /** Graceful stop (issue 7 §5): stop accepting, drain, close sockets, then disconnect from the engine. */
  close(): Promise<void>;
}

export async function runConsoleWorker(
  settings: WorkerSettings,
  logger: ServerLogger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningWorker> {
  const engineShown = redactUrl(settings.engineUrl);
  const configShown = settings.configFound
    ? settings.configPath
    : env.ENG_ENGINE_PID !== undefined
      ? 'from the engine that launched it'
      : `${settings.configPath}, not found: defaults`;
  logger.info(`starting console worker v${WORKER_VERSION} (engine ${engineShown}; config ${configShown})`);
  const assets = await embeddedAssets();
  if (!assets.has('/index.html')) logger.warn('the embedded UI bundle is empty: / and /assets/* will answer 404');

  const handoff = createBusHandoff({
    engineUrl: settings.engineUrl,
    env,
    logger: { debug: (m) => logger.debug(redactText(m)), warn: (m) => logger.warn(redactText(m)) },
  });
  // the worker's own session (reconnects by itself); the UI is served whether or not the engine is up
  const client = connect(settings.engineUrl, {
    name: env.ENG_WORKER_NAME || 'console',
    description: 'eng console worker: embedded UI, console API and /ws proxy on one port',
    reconnect: { initialDelayMs: 500, maxDelayMs: 5000, maxRetries: -1 },
    logger: {
      debug: (m) => logger.debug(redactText(m)),
      info: (m) => logger.debug(redactText(m)),
      warn: (m) => logger.debug(redactText(m)),
      error: (m) => logger.warn(redactText(m)),
    },
  });
  const startedAt = Date.now();
  let http: ConsoleHttpServer | undefined;
  // /_console/* and /ws/streams as eng-console serves them (issue 19 §1)
  const api = createConsoleApi({
    client,
    urls: { http: settings.engineHttpUrl, streams: settings.engineStreamsUrl, bridge: settings.engineUrl },
    config: () =>
      workerConfigBody({
        settings,
        port: http?.port ?? settings.httpPort,
        url: http?.url,
        client,
        handoff: !!handoff,
        launchedByEngine: env.ENG_ENGINE_PID !== undefined,
        startedAt,
      }),
    hostAllowed: (req) => hostAllowed(settings.host, req.headers.host),
    logger: { debug: (m) => logger.debug(redactText(m)), warn: (m) => logger.warn(redactText(m)) },
  });
  try {
    http = await startHttpServer({
      host: settings.host,
      port: settings.httpPort,
      engineUrl: settings.engineUrl,
      assets,
      logger,
      handoff,
      api,
    });
  } catch (err) {
    await client.close();
    throw err;
  }
  const server = http;
  const status = (): ConsoleStatus => ({ http_port: server.port, engine_url: engineShown, version: WORKER_VERSION, url: server.url });

  registerStatus(client, status);
  let everConnected = false;
  client.on('connected', () => {
    logger.info(`${everConnected ? 'reconnected' : 'connected'} to the engine at ${engineShown}`);
    everConnected = true;
  });
  client.on('disconnected', ({ code }) => logger.warn(`lost the engine at ${engineShown} (close ${code}); reconnecting`));
  client.on('reconnecting', ({ attempt }) => {
    if (attempt === 1 && !everConnected)
      logger.warn(`the engine at ${engineShown} is not reachable yet; retrying (the UI is served meanwhile)`);
  });

  logger.info(
    `console ready — UI on ${server.url}, /ws ${handoff ? 'handed to the engine that launched this worker' : 'proxies to'} ${engineShown}; engine HTTP ${api.shown.http}, streams ${api.shown.streams}`,
  );

  let closing: Promise<void> | undefined;
  return {
    http: server,
    client,
    status,
    close() {
      closing ??= (async () => {
        await server.close();
        await client.close();
      })();
      return closing;
    },
  };
}
