import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ErrorCode } from '@eng/protocol';
import { capConnections, defaultMaxConnections, headerDeadline } from '../../bus/socket-limits.ts';
import type { Logger } from '../../log.ts';
import type { HttpModuleConfig } from './config.ts';
import { CorsPolicy } from './cors.ts';
import { failRequest, type PipelineEnv, responseClosed, serveTrigger, type TriggerRoute } from './pipeline.ts';
import { PayloadTooLargeError, readBody } from './request.ts';
import { sendError, sendJson, sendNotFound } from './response.ts';
import { HTTP_METHODS, type HttpMethod, Router } from './router.ts';

export interface HttpAddress {
  host: string;
  port: number;
  url: string;
}

/** A route the engine itself serves (observability's `POST /v1/traces`, …), with raw node:http access. */
export type InternalRouteHandler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => void | Promise<void>;

/**
 * In-process API other modules use to mount engine routes on the HTTP port (service `http.router`).
 * See README.md in this folder.
 */
export interface HttpRouterService {
  /** Mount a handler; returns a function that removes it. Engine routes win over trigger routes. */
  addRoute(method: string, path: string, handler: InternalRouteHandler): () => void;
  /** Read a request body within `body_limit_bytes`; rejects with PayloadTooLargeError. */
  readBody(req: IncomingMessage): Promise<Buffer>;
  /** `body_limit_bytes`: also the most a compressed body may inflate to. */
  readonly bodyLimitBytes: number;
  sendJson(res: ServerResponse, status: number, body: unknown): void;
  /** Answer `{"error":{code,message}}` with the given status. */
  sendError(res: ServerResponse, status: number, code: string, message: string): void;
  readonly address: HttpAddress | undefined;
}

/** The HTTP port: node:http directly (the request path must stay cheap, §Performance budgets). */
export class HttpServer {
  readonly routes = new Router<TriggerRoute>();
  readonly internal = new Router<InternalRouteHandler>();
  address?: HttpAddress;
  private server?: Server;
  private readonly cors: CorsPolicy;
  private readonly env: PipelineEnv;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  /** Every response's one 'close' listener (called with the response as `this`). */
  private readonly released: (this: ServerResponse) => void;

  constructor(
    private readonly config: HttpModuleConfig,
    env: Omit<PipelineEnv, 'config' | 'globalMiddleware'>,
    private readonly log: Logger,
  ) {
    this.cors = new CorsPolicy(config.cors, (message) => log.warn(message));
    const globalMiddleware = [...config.middleware]
      .filter((m) => m.phase === 'preHandler')
      .sort((a, b) => a.priority - b.priority)
      .map((m) => m.function_id);
    this.env = { ...env, config, globalMiddleware };
    const server = this;
    this.released = function (this: ServerResponse) {
      server.active--;
      responseClosed(this);
      server.waiting.shift()?.();
    };
  }

  async listen(): Promise<HttpAddress> {
    // a socket that never completes a request head is closed after headers_timeout_ms; bodies get node's 300 s
    const server = createServer(
      { keepAliveTimeout: this.config.keep_alive_timeout_ms, ...headerDeadline(this.config.headers_timeout_ms, 300_000) },
      (req, res) => this.onRequest(req, res),
    );
    capConnections(server, this.config.max_connections ?? defaultMaxConnections(), 'HTTP port', 'max_connections of eng-http', (message) =>
      this.log.warn(message),
    );
    server.on('clientError', (err, socket) => {
      // malformed requests get a 400 and a closed socket, never a crash
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      else socket.destroy();
      this.log.debug(`client error: ${(err as Error).message}`);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = server.address();
    const port = typeof bound === 'object' && bound ? bound.port : this.config.port;
    const host = this.config.host;
    const urlHost = host.includes(':') ? `[${host}]` : host;
    this.address = { host, port, url: `http://${urlHost}:${port}` };
    return this.address;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  service(): HttpRouterService {
    const server = this;
    return {
      addRoute: (method, path, handler) => {
        const upper = method.toUpperCase();
        if (!(HTTP_METHODS as readonly string[]).includes(upper)) throw new Error(`unsupported HTTP method ${method}`);
        this.internal.add(upper as HttpMethod, path, handler);
        return () => this.internal.remove(upper as HttpMethod, path, (h) => h === handler);
      },
      readBody: (req) => readBody(req, this.config.body_limit_bytes),
      bodyLimitBytes: this.config.body_limit_bytes,
      sendJson: (res, status, body) => sendJson(res, status, body),
      sendError: (res, status, code, message) => sendError(res, status, code, message),
      get address() {
        return server.address;
      },
    };
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (req.headers.origin !== undefined) {
      // browsers only: engine routes (OTLP) answer pages the config lists, trigger routes keep §6.1 CORS
      const pathname = this.engineRoutePath(req);
      if (pathname !== undefined ? this.cors.applyEngine(req, res, pathname) : this.cors.apply(req, res)) return;
    }
    if (this.active >= this.config.concurrency_request_limit) {
      this.waiting.push(() => this.dispatch(req, res));
      return;
    }
    this.dispatch(req, res);
  }

  /** The path when it is an engine route's (whatever the method: a preflight asks about another). */
  private engineRoutePath(req: IncomingMessage): string | undefined {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    return this.internal.methodsFor(pathname).length > 0 ? pathname : undefined;
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    if (res.destroyed) {
      this.waiting.shift()?.();
      return;
    }
    this.active++;
    // 'close' is emitted once per response: a shared listener, no once-wrapper per request
    res.on('close', this.released);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? '' : url.slice(q + 1);
    const method = req.method ?? 'GET';

    const internal = this.internal.match(method, pathname);
    if (internal) {
      this.runInternal(internal.route.value, req, res, internal.params);
      return;
    }
    // HEAD falls back to the GET route, as axum's `get()` does; Node drops the body
    const match = this.routes.match(method, pathname) ?? (method === 'HEAD' ? this.routes.match('GET', pathname) : null);
    if (match) {
      serveTrigger(this.env, req, res, match, search).catch((err: Error) => this.fail(res, err));
      return;
    }
    const allowed = this.routes.methodsFor(pathname);
    if (allowed.length > 0) {
      res.setHeader('allow', allowed.join(', '));
      sendError(res, 405, ErrorCode.MethodNotAllowed, 'Method Not Allowed');
      return;
    }
    sendNotFound(res);
  }

  private runInternal(handler: InternalRouteHandler, req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void {
    try {
      const done = handler(req, res, params);
      if (done && typeof (done as Promise<void>).catch === 'function') (done as Promise<void>).catch((err: Error) => this.fail(res, err));
    } catch (err) {
      this.fail(res, err as Error);
    }
  }

  private fail(res: ServerResponse, err: Error): void {
    if (err instanceof PayloadTooLargeError) {
      if (err.closeConnection) res.setHeader('connection', 'close');
      sendError(res, 413, ErrorCode.PayloadTooLarge, err.message);
      return;
    }
    failRequest(this.env, res, err);
  }
}
