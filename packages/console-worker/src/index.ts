export {
  ConsoleConfigSchema,
  DEFAULT_ENGINE_URL,
  DEFAULT_HOST,
  DEFAULT_HTTP_PORT,
  extractConsoleBlock,
  parseWorkerConfigEnv,
  resolveSettings,
  SettingsError,
  type WorkerSettings,
} from './config.ts';
export { currentTarget, manifest, type WorkerManifest } from './manifest.ts';
export { type ConsoleHttpServer, SECURITY_HEADERS, startHttpServer, uiUrl } from './server.ts';
export { type ConsoleStatus, STATUS_FUNCTION_ID, statusHandler } from './status.ts';
export { WORKER_VERSION } from './version.ts';
