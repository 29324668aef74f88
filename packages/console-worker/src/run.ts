import { redactText, redactUrl } from '@eng/console/redact';
import { connect, type EngClient } from '@eng/sdk';
import { createBusHandoff } from './bus-handoff.ts';
import type { WorkerSettings } from './config.ts';
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
  logger.info(
    `starting console worker v${WORKER_VERSION} (engine ${engineShown}; config ${settings.configPath}${settings.configFound ? '' : ', not found: defaults'})`,
  );
  const assets = embeddedAssets();
  if (!assets.has('/index.html')) logger.warn('the embedded UI bundle is empty: / and /assets/* will answer 404');

  const handoff = createBusHandoff({
    engineUrl: settings.engineUrl,
    env,
    logger: { debug: (m) => logger.debug(redactText(m)), warn: (m) => logger.warn(redactText(m)) },
  });
  const http = await startHttpServer({
    host: settings.host,
    port: settings.httpPort,
    engineUrl: settings.engineUrl,
    assets,
    logger,
    handoff,
  });
  const status = (): ConsoleStatus => ({ http_port: http.port, engine_url: engineShown, version: WORKER_VERSION, url: http.url });

  // the worker's own session (reconnects by itself); the UI is served whether or not the engine is up
  const client = connect(settings.engineUrl, {
    name: env.ENG_WORKER_NAME || 'console',
    description: 'eng console worker: embedded UI and /ws proxy on one port',
    reconnect: { initialDelayMs: 500, maxDelayMs: 5000, maxRetries: -1 },
    logger: {
      debug: (m) => logger.debug(redactText(m)),
      info: (m) => logger.debug(redactText(m)),
      warn: (m) => logger.debug(redactText(m)),
      error: (m) => logger.warn(redactText(m)),
    },
  });
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
    `console ready — UI on ${http.url}, /ws ${handoff ? 'handed to the engine that launched this worker' : 'proxies to'} ${engineShown}`,
  );

  let closing: Promise<void> | undefined;
  return {
    http,
    client,
    status,
    close() {
      closing ??= (async () => {
        await http.close();
        await client.close();
      })();
      return closing;
    },
  };
}
