import type { ModuleContext } from '../core/module.ts';
import { type CatalogEntry, findCatalogEntry } from './catalog.ts';
import type { Supervisor } from './supervisor.ts';

/**
 * Learns when a supervised catalog worker serves, and where (issue 7 §6: `eng start` prints the
 * console URL): the worker registering its readiness function (`console::status`, `mcp::http`)
 * means it is up; the URL comes from calling it, or from the HTTP trigger address. The function
 * going away (crash, stop) clears the URL until the restarted worker registers it again.
 */
export function watchReadiness(ctx: ModuleContext, supervisor: Supervisor): () => void {
  const probes = new Map<string, { name: string; readiness: NonNullable<CatalogEntry['readiness']> }>();
  for (const name of supervisor.names()) {
    const readiness = findCatalogEntry(name)?.readiness;
    if (readiness) probes.set(readiness.functionId, { name, readiness });
  }
  if (probes.size === 0) return () => undefined;

  const resolveUrl = async (functionId: string): Promise<void> => {
    const probe = probes.get(functionId);
    if (!probe) return;
    const { url } = probe.readiness;
    if (url.from === 'http') {
      const http = ctx.services.get<{ url?: string }>('address.http');
      supervisor.setUrl(probe.name, http?.url ? `${http.url.replace(/\/$/, '')}${url.path}` : null);
      return;
    }
    try {
      const result = (await ctx.call(functionId, {}, { timeoutMs: 5000 })) as { url?: unknown } | null;
      if (typeof result?.url === 'string') supervisor.setUrl(probe.name, result.url);
    } catch (err) {
      ctx.log.debug(`${functionId} did not answer: ${(err as Error).message}`);
    }
  };

  const off = ctx.core.functions.onChange(({ id, kind }) => {
    const probe = probes.get(id);
    if (!probe) return;
    if (kind === 'removed') supervisor.setUrl(probe.name, null);
    // a registration is a frame being handled: ask once it is done
    else setImmediate(() => void resolveUrl(id));
  });
  for (const id of probes.keys()) if (ctx.core.functions.has(id)) void resolveUrl(id);
  return off;
}
