import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { EngineConfig } from '../config/load.ts';
import type { SupervisedState } from './supervisor.ts';

/** The worker bus URL an engine started with `config` listens on (its eng-worker-manager entry). */
export function busUrlOf(config: EngineConfig): string {
  const entry = config.workers.find((w) => w.name === 'eng-worker-manager' || w.name === 'iii-worker-manager');
  const port = Number(entry?.config?.port ?? 49134);
  const rawHost = String(entry?.config?.host ?? '127.0.0.1');
  const host = rawHost === '0.0.0.0' ? '127.0.0.1' : rawHost === '::' ? '::1' : rawHost;
  return `ws://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Ask a running engine which workers its supervisor launched (`engine::supervisor::list`), for
 * `eng worker list`. Null when no engine answers within `timeoutMs` (not running, or not ours).
 */
export function querySupervisor(busUrl: string, timeoutMs = 1500): Promise<SupervisedState[] | null> {
  return new Promise((resolve) => {
    let settled = false;
    const ws = new WebSocket(busUrl, { handshakeTimeout: timeoutMs });
    const finish = (value: SupervisedState[] | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    const invocationId = randomUUID();
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'invokefunction', invocation_id: invocationId, function_id: 'engine::supervisor::list', data: {} }));
    });
    ws.on('message', (raw) => {
      let frame: { type?: string; invocation_id?: string; result?: { workers?: SupervisedState[] } };
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        return;
      }
      if (frame.type === 'invocationresult' && frame.invocation_id === invocationId) finish(frame.result?.workers ?? null);
    });
    ws.on('error', () => finish(null));
    ws.on('close', () => finish(null));
  });
}
