import { request } from 'node:http';
import { connect } from 'node:net';
import { WebSocket } from 'ws';

/**
 * `GET /_console/probe`: the console checks each engine endpoint it depends on, from where it
 * runs (the reference probed the bridge from the browser at a hard-coded URL, console spec §7.3).
 */
export interface ProbeResult {
  name: 'engine_http' | 'streams_ws' | 'bridge_ws';
  url: string;
  ok: boolean;
  latency_ms: number;
  detail: string;
}

function probeHttp(url: string, timeoutMs: number): Promise<Omit<ProbeResult, 'name'>> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      // any HTTP answer (even 404) proves the port serves the engine's HTTP module
      resolve({ url, ok: true, latency_ms: performance.now() - started, detail: `HTTP ${res.statusCode}` });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) =>
      resolve({ url, ok: false, latency_ms: performance.now() - started, detail: (err as NodeJS.ErrnoException).code ?? err.message }),
    );
    req.end();
  });
}

function probeWs(url: string, timeoutMs: number): Promise<Omit<ProbeResult, 'name'>> {
  const started = performance.now();
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
    ws.once('open', () => {
      resolve({ url, ok: true, latency_ms: performance.now() - started, detail: 'WebSocket handshake completed' });
      ws.close(1000, 'probe');
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ url, ok: false, latency_ms: performance.now() - started, detail: `HTTP ${res.statusCode} on upgrade` });
      ws.terminate();
    });
    ws.once('error', (err) =>
      resolve({ url, ok: false, latency_ms: performance.now() - started, detail: (err as NodeJS.ErrnoException).code ?? err.message }),
    );
  });
}

/**
 * The bridge is probed with a TCP connect, not a WebSocket handshake: a handshake would make the
 * engine register (and then drop) a worker connection, firing `engine::workers-available` for
 * every open console tab.
 */
function probeTcp(url: string, timeoutMs: number, connected: boolean): Promise<Omit<ProbeResult, 'name'>> {
  const started = performance.now();
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port), timeout: timeoutMs });
    socket.once('connect', () => {
      const detail = connected ? 'port open; the console is connected as a client' : 'port open, but the console has no bus session yet';
      resolve({ url, ok: true, latency_ms: performance.now() - started, detail });
      socket.end();
    });
    socket.once('timeout', () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once('error', (err) =>
      resolve({ url, ok: false, latency_ms: performance.now() - started, detail: (err as NodeJS.ErrnoException).code ?? err.message }),
    );
  });
}

export async function runProbes(
  urls: { http: string; streams: string; bridge: string },
  bridgeConnected: boolean,
  timeoutMs = 3000,
): Promise<ProbeResult[]> {
  const [http, streams, bridge] = await Promise.all([
    probeHttp(`${urls.http}/`, timeoutMs),
    probeWs(`${urls.streams}/`, timeoutMs),
    probeTcp(urls.bridge, timeoutMs, bridgeConnected),
  ]);
  const round = (r: Omit<ProbeResult, 'name'>) => ({ ...r, latency_ms: Math.round(r.latency_ms * 10) / 10 });
  return [
    { name: 'engine_http', ...round(http) },
    { name: 'streams_ws', ...round(streams) },
    { name: 'bridge_ws', ...round(bridge) },
  ];
}
