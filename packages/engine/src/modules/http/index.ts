import { describeZodError } from '@eng/protocol';
import type { ChannelManager } from '../../bus/channels.ts';
import { BusService } from '../../bus/server.ts';
import type { EngineModule } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { EngineTracer } from '../observability/tracer.ts';
import { HTTP_CALL_REQUEST_FORMAT, HTTP_TRIGGER_REQUEST_FORMAT, HttpModuleConfig, HttpTriggerConfig } from './config.ts';
import type { TriggerRoute } from './pipeline.ts';
import { type HttpMethod, routeKey } from './router.ts';
import { HttpServer } from './server.ts';
import { RouteShadows } from './shadows.ts';

export type { HttpRouterService, InternalRouteHandler } from './server.ts';

/** Names under which the HTTP module publishes its parts on `services`. */
export const HttpService = {
  Address: 'address.http',
  Router: 'http.router',
} as const;

/** Validate an `http` binding's config; the message is what the worker sees (§2.3.7). */
function parseTriggerConfig(config: unknown): { method: HttpMethod; path: string; trigger: HttpTriggerConfig } {
  const parsed = HttpTriggerConfig.safeParse(config ?? {});
  if (!parsed.success) {
    if (parsed.error.issues[0]?.path[0] === 'api_path') {
      throw new Error('api_path is required for http triggers (a non-empty string such as "users/:id")');
    }
    throw new Error(`invalid http trigger config: ${describeZodError(parsed.error)}`);
  }
  return { method: (parsed.data.http_method ?? 'GET') as HttpMethod, path: parsed.data.api_path, trigger: parsed.data };
}

/** `eng-http` (iii: `iii-http`): function-backed HTTP routes on port 3111. spec: engine-protocol §5.2, §6.1. */
export function httpModule(): EngineModule<HttpModuleConfig> {
  let server: HttpServer | undefined;
  return {
    name: 'eng-http',
    aliases: ['iii-http'],
    description: 'HTTP triggers: expose functions as HTTP endpoints',
    configSchema: HttpModuleConfig,
    async start(ctx) {
      const channels = ctx.services.get<ChannelManager>(BusService.Channels);
      if (!channels) throw new Error('eng-http needs the worker bus (eng-worker-manager) for its request channels');
      const http = new HttpServer(
        ctx.config,
        {
          channels,
          log: ctx.log,
          invoke: (id, data, options) => ctx.invoke(id, data, options),
          dispatch: (id, data, options, target) => ctx.core.invoker.dispatch(id, data, options, target),
          cancel: (invocationId, reason) => ctx.core.invoker.cancel(invocationId, undefined, reason),
          tracer: () => ctx.services.get<EngineTracer>('observability.tracer'),
        },
        ctx.log,
      );
      server = http;
      const shadows = new RouteShadows();

      ctx.registerTriggerType(
        {
          id: 'http',
          description: 'HTTP API trigger',
          trigger_request_format: HTTP_TRIGGER_REQUEST_FORMAT,
          call_request_format: HTTP_CALL_REQUEST_FORMAT,
        },
        {
          register(binding: TriggerBinding) {
            const { method, path, trigger } = parseTriggerConfig(binding.config);
            const route: TriggerRoute = {
              bindingId: binding.id,
              functionId: binding.functionId,
              conditionFunctionId: trigger.condition_function_id ?? undefined,
              middlewareFunctionIds: trigger.middleware_function_ids ?? [],
              metadata: binding.metadata,
            };
            // throws on a same-shape route with other parameter names; same method+path replaces
            http.routes.add(method, path, route);
            shadows.push(routeKey(method, path), { binding, route, method, path });
            ctx.log.info(`route ${method} ${path} → ${binding.functionId}`);
          },
          unregister(binding: TriggerBinding) {
            let parsed: ReturnType<typeof parseTriggerConfig>;
            try {
              parsed = parseTriggerConfig(binding.config);
            } catch {
              return;
            }
            const key = routeKey(parsed.method, parsed.path);
            const next = shadows.remove(key, binding.id);
            // only the binding that still owns the route removes it (a later binding may have replaced it)
            if (!http.routes.remove(parsed.method, parsed.path, (r) => r.bindingId === binding.id)) return;
            if (next) {
              // the route goes back to the binding it shadowed, which never stopped being registered
              http.routes.add(next.method, next.path, next.route);
              ctx.log.info(`route ${parsed.method} ${parsed.path} → ${next.binding.functionId} again (${binding.id} left)`);
            } else ctx.log.info(`route ${parsed.method} ${parsed.path} removed`);
          },
        },
      );

      const address = await http.listen();
      ctx.services.set(HttpService.Address, address);
      ctx.services.set(HttpService.Router, http.service());
      ctx.log.info(`HTTP triggers listening on ${address.url}`);
    },
    async stop() {
      await server?.close();
    },
  };
}
