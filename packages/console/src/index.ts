export { type ConsoleOptions, DEFAULTS, engineUrls, envFlag, resolveOptions } from './options.ts';
export { redactText, redactUrl } from './redact.ts';
export { type ConsoleServer, type ConsoleServerOptions, hostnameOf, isLoopbackHost, startConsoleServer } from './server.ts';
export { IMMUTABLE, loadBundle, NO_CACHE, type StaticBundle } from './static-assets.ts';
export { CONSOLE_VERSION } from './version.ts';
export { createWsProxy, sameOrigin, truncateReason, type WsProxy, type WsProxyOptions } from './ws-proxy.ts';
