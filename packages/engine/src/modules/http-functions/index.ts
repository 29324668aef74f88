import { validateHeaderName, validateHeaderValue } from 'node:http';
import { BlockList } from 'node:net';
import { EngError, type HttpInvocationRef } from '@eng/protocol';
import { z } from 'zod';
import type { InProcessHandler } from '../../core/functions.ts';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import type { EngineTracer } from '../observability/tracer.ts';
import { addException, hostOf, redactUrl, UrlGuard } from './url-security.ts';
import { callWebhook, type ResolvedAuth, type WebhookLimits, type WebhookTarget } from './webhook.ts';

// spec: engine-protocol §3.4 (HTTP-invoked functions), §7.2 (`iii-http-functions` config).

export { isPrivateAddress, redactUrl } from './url-security.ts';
export { signBody } from './webhook.ts';

export const HttpFunctionsConfig = z
  .object({
    security: z
      .object({
        /** Host globs a function URL may name (`api.example.com`, `*.example.com`); `*` = any host. */
        url_allowlist: z.array(z.string().min(1)).default(['*']),
        /** Refuse loopback, private, link-local and reserved addresses (checked again on every connection). */
        block_private_ips: z.boolean().default(true),
        /** Refuse `http:` URLs. */
        require_https: z.boolean().default(true),
        /** Addresses or CIDR ranges block_private_ips lets through (an internal service you mean to call); ours. */
        private_ip_exceptions: z
          .array(z.string().min(1))
          .default([])
          .superRefine((entries, check) => {
            for (const entry of entries) {
              try {
                addException(new BlockList(), entry);
              } catch (err) {
                check.addIssue({ code: 'custom', message: (err as Error).message });
              }
            }
          }),
        /** Environment variable names (globs) an `auth` block may name; ours, iii has no such rule. */
        auth_env_allowlist: z.array(z.string().min(1)).default(['*']),
      })
      .strict()
      .default({
        url_allowlist: ['*'],
        block_private_ips: true,
        require_https: true,
        private_ip_exceptions: [],
        auth_env_allowlist: ['*'],
      }),
    /** When the registration gives no `timeout_ms`. */
    default_timeout_ms: z.number().int().positive().default(30_000),
    /** A larger answer fails the call with `response_too_large`. */
    max_response_bytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024),
    /** Redirects followed per call (each to a URL the security rules allow); 0 follows none. */
    max_redirects: z.number().int().min(0).max(20).default(5),
  })
  .strict();
export type HttpFunctionsConfig = z.infer<typeof HttpFunctionsConfig>;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers the engine writes itself; a registration may not set them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'traceparent',
  'tracestate',
  'baggage',
]);

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function glob(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/** Builds, for each registration, the handler that calls its URL. */
class HttpFunctionsService {
  private readonly guard: UrlGuard;
  private readonly envAllow: RegExp[];
  private readonly limits: WebhookLimits;

  constructor(private readonly ctx: ModuleContext<HttpFunctionsConfig>) {
    this.guard = new UrlGuard(ctx.config.security);
    this.envAllow = ctx.config.security.auth_env_allowlist.map(glob);
    this.limits = {
      maxResponseBytes: ctx.config.max_response_bytes,
      maxRedirects: ctx.config.max_redirects,
      userAgent: `eng/${ctx.engineVersion}`,
    };
  }

  async prepare(functionId: string, invocation: HttpInvocationRef): Promise<InProcessHandler> {
    const method = (invocation.method ?? 'POST').toUpperCase();
    if (!METHODS.has(method)) {
      throw new EngError('INVALID_ARGUMENTS', `invocation.method "${invocation.method}" is not one of GET, POST, PUT, PATCH, DELETE`);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(invocation.headers ?? {})) {
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-eng-') || lower.startsWith('x-iii-')) {
        throw new EngError('INVALID_ARGUMENTS', `invocation.headers: "${name}" is set by the engine and cannot be given`);
      }
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value);
      } catch (err) {
        throw new EngError('INVALID_ARGUMENTS', `invocation.headers: "${name}" is not a valid header: ${(err as Error).message}`);
      }
      headers[lower] = value;
    }
    const auth = this.resolveAuth(invocation.auth);
    if (auth?.type === 'api_key') {
      const lower = auth.header.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-eng-') || lower.startsWith('x-iii-')) {
        throw new EngError('INVALID_ARGUMENTS', `auth.header "${auth.header}" is set by the engine and cannot carry the key`);
      }
    }
    const url = await this.guard.checkResolved(invocation.url);
    const target: WebhookTarget = {
      functionId,
      url,
      method,
      timeoutMs: invocation.timeout_ms ?? this.ctx.config.default_timeout_ms,
      headers,
      auth,
    };
    return (input, info) => this.call(target, input, info);
  }

  /** `auth` names environment variables of the engine (never values from the bus). */
  private resolveAuth(auth: HttpInvocationRef['auth']): ResolvedAuth | undefined {
    if (!auth) return undefined;
    const read = (field: string, name: string): string => {
      if (!ENV_NAME.test(name)) throw new EngError('INVALID_ARGUMENTS', `auth.${field} "${name}" is not an environment variable name`);
      if (!this.envAllow.some((re) => re.test(name))) {
        throw new EngError(
          'FORBIDDEN',
          `auth.${field} names ${name}, which security.auth_env_allowlist of eng-http-functions does not allow`,
        );
      }
      const value = process.env[name];
      if (value === undefined || value === '') {
        throw new EngError(
          'INVALID_ARGUMENTS',
          `auth.${field} names the environment variable ${name}, which is not set in the engine's environment`,
        );
      }
      return value;
    };
    if (auth.type === 'hmac') return { type: 'hmac', secret: read('secret_key', auth.secret_key) };
    if (auth.type === 'bearer') return { type: 'bearer', token: read('token_key', auth.token_key) };
    try {
      validateHeaderName(auth.header);
    } catch {
      throw new EngError('INVALID_ARGUMENTS', `auth.header "${auth.header}" is not a valid header name`);
    }
    return { type: 'api_key', header: auth.header, value: read('value_key', auth.value_key) };
  }

  /** One call: a client span under the caller's, the request, the answer mapped to a result or an error. */
  private async call(target: WebhookTarget, input: unknown, info: Parameters<InProcessHandler>[1]): Promise<unknown> {
    const shown = redactUrl(target.url);
    const tracer = this.ctx.services.get<EngineTracer>('observability.tracer');
    const span = tracer?.startSpan(`${target.method} ${shown}`, {
      traceparent: info.traceparent,
      kind: 'client',
      attributes: {
        'http.request.method': target.method,
        'url.full': shown,
        'server.address': hostOf(target.url),
        'server.port': Number(target.url.port || (target.url.protocol === 'https:' ? 443 : 80)),
        function_id: target.functionId,
        'eng.function.kind': 'http',
        'eng.invocation.id': info.invocationId,
      },
    });
    try {
      const result = await callWebhook(
        target,
        {
          invocationId: info.invocationId,
          // which worker called is the engine's business, not the endpoint's
          payload: withoutCaller(input),
          traceparent: span?.traceparent ?? info.traceparent,
          baggage: info.baggage,
        },
        this.guard,
        this.limits,
      );
      const attributes = {
        'http.response.status_code': result.status,
        ...(result.redirects ? { 'http.request.resend_count': result.redirects, 'eng.http.final_url': redactUrl(result.finalUrl) } : {}),
      };
      if (result.outcome.ok) {
        span?.end({ status: 'ok', attributes });
        return result.outcome.result;
      }
      span?.end({ error: result.outcome.error, attributes });
      throw new EngError(result.outcome.error.code, result.outcome.error.message);
    } catch (err) {
      if (!(err instanceof EngError)) {
        span?.end({ error: err as Error });
        throw err;
      }
      span?.end({ error: err.toBody() });
      throw err;
    }
  }
}

function withoutCaller(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || !Object.hasOwn(input, '_caller_worker_id')) return input;
  const { _caller_worker_id: _caller, ...rest } = input as Record<string, unknown>;
  return rest;
}

/** `eng-http-functions` (iii: `iii-http-functions`): functions the engine serves by calling a URL. */
export function httpFunctionsModule(): EngineModule<HttpFunctionsConfig> {
  let context: ModuleContext<HttpFunctionsConfig> | undefined;
  return {
    name: 'eng-http-functions',
    aliases: ['iii-http-functions'],
    description: 'HTTP-invoked functions: registerfunction with an invocation URL the engine calls',
    configSchema: HttpFunctionsConfig,
    start(ctx) {
      context = ctx;
      ctx.core.httpFunctions = new HttpFunctionsService(ctx);
      const { url_allowlist, block_private_ips, require_https } = ctx.config.security;
      ctx.log.info(
        `HTTP-invoked functions: url_allowlist ${JSON.stringify(url_allowlist)}, block_private_ips ${block_private_ips}, require_https ${require_https}`,
      );
    },
    stop() {
      if (context) context.core.httpFunctions = undefined;
    },
  };
}
