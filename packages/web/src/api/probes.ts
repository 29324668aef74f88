import { useQuery } from '@tanstack/react-query';
import { basePath, consoleEndpoint } from '../lib/base-path.ts';
import { callEngine } from './client.ts';

/**
 * Live connectivity probes of the Config page (seed 2.8 "engine connectivity with live probes").
 * Browser-side: the bus round trip through `/ws` and the streams socket through `/ws/streams`.
 * Server-side (eng-console only): `/_console/probe` checks the engine ports from the console host.
 */
export interface Probe {
  id: string;
  label: string;
  target: string;
  ok: boolean;
  latencyMs?: number;
  detail: string;
}

export const probeKeys = {
  all: ['probes'] as const,
  server: () => [...probeKeys.all, 'server'] as const,
  browser: () => [...probeKeys.all, 'browser'] as const,
};

async function probeBus(): Promise<Probe> {
  const t0 = performance.now();
  try {
    await callEngine('engine::trigger-types::list', {}, { timeoutMs: 3000 });
    return {
      id: 'bus',
      label: 'Engine bus (function call)',
      target: `${location.host}${basePath()}ws`,
      ok: true,
      latencyMs: performance.now() - t0,
      detail: 'round trip of engine::trigger-types::list',
    };
  } catch (err) {
    return {
      id: 'bus',
      label: 'Engine bus (function call)',
      target: `${location.host}${basePath()}ws`,
      ok: false,
      detail: (err as Error).message,
    };
  }
}

/** How long the streams socket must stay open to count as reachable (the stream monitor waits as long). */
const STAY_OPEN_MS = 400;

function probeStreams(): Promise<Probe> {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${proto}//${location.host}${basePath()}ws/streams`;
  const base = { id: 'streams', label: 'Streams socket', target: url };
  return new Promise((resolve) => {
    const t0 = performance.now();
    let done = false;
    const ws = new WebSocket(url);
    const finish = (probe: Probe) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(probe);
      try {
        ws.close();
      } catch {
        // already closed
      }
    };
    let timer = setTimeout(() => finish({ ...base, ok: false, detail: 'no answer within 3 s' }), 3000);
    // eng-console accepts the browser's socket even when it cannot reach the engine's streams port,
    // then closes it at once with 1011 and the reason: "open" alone is no proof, it must stay open
    ws.onopen = () => {
      const latencyMs = performance.now() - t0;
      clearTimeout(timer);
      timer = setTimeout(() => finish({ ...base, ok: true, latencyMs, detail: 'WebSocket open through the console' }), STAY_OPEN_MS);
    };
    ws.onclose = (e) => finish({ ...base, ok: false, detail: e.reason || `closed (${e.code}) — this server may not proxy /ws/streams` });
  });
}

export function useBrowserProbes() {
  return useQuery({
    queryKey: probeKeys.browser(),
    queryFn: async () => Promise.all([probeBus(), probeStreams()]),
    refetchInterval: 10_000,
    retry: 0,
    // probes report the outage rather than wait for it to end
    networkMode: 'always',
    meta: { source: 'console' },
  });
}

interface ServerProbe {
  name: string;
  url: string;
  ok: boolean;
  latency_ms: number;
  detail: string;
}

const SERVER_LABEL: Record<string, string> = {
  engine_http: 'Engine HTTP API',
  streams_ws: 'Engine streams WebSocket',
  bridge_ws: 'Engine SDK bridge (worker bus)',
};

export function useServerProbes() {
  return useQuery({
    queryKey: probeKeys.server(),
    queryFn: async (): Promise<{ available: true; probes: Probe[] } | { available: false; reason: string }> => {
      const res = await fetch(consoleEndpoint('probe'));
      if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json'))
        return { available: false, reason: 'the server of this page cannot probe the engine (it serves no /_console/probe)' };
      const body = (await res.json()) as { probes: ServerProbe[] };
      return {
        available: true,
        probes: body.probes.map((p) => ({
          id: p.name,
          label: SERVER_LABEL[p.name] ?? p.name,
          target: p.url,
          ok: p.ok,
          latencyMs: p.latency_ms,
          detail: p.detail,
        })),
      };
    },
    refetchInterval: 10_000,
    retry: 0,
    // probes report the outage rather than wait for it to end
    networkMode: 'always',
    meta: { source: 'console' },
  });
}
