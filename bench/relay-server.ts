/**
 * Baseline for bench/invoke: a bare WebSocket relay doing the same two hops as the engine
 * (caller → relay → worker → relay → caller) without parsing anything. `?role=worker` marks the
 * executing side; every other connection is a caller.
 */
import { type WebSocket, WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
let worker: WebSocket | undefined;
let caller: WebSocket | undefined;
wss.on('connection', (ws, req) => {
  if (req.url?.includes('role=worker')) {
    worker = ws;
    ws.on('message', (data, isBinary) => caller?.send(data, { binary: isBinary }));
  } else {
    caller = ws;
    ws.on('message', (data, isBinary) => worker?.send(data, { binary: isBinary }));
  }
});
wss.on('listening', () => {
  const address = wss.address();
  process.stdout.write(`relay: ready ${typeof address === 'object' && address ? address.port : address}\n`);
});
process.on('SIGTERM', () => process.exit(0));
