/**
 * Baseline for bench/invoke: a bare WebSocket relay doing the same two hops as the engine
 * (caller → relay → worker → relay → caller) without parsing anything. `?role=worker` marks the
 * executing side; every other connection is a caller.
 *
 * `--mode parse` and `--mode spans` make the floor under the cost of a call without trace context
 * (issue 16 goal 4): both parse every frame and write it out again, as any engine routing calls
 * must; `spans` also keeps one span per call that came without a traceparent, the least any engine
 * can (bench/floor-spans.ts: ids, the traceparent handed to the worker, one record in a ring and a
 * Map by trace id), ended when the result comes back. Their CPU difference per call is what
 * recording such a call costs at the floor.
 */
import { type WebSocket, WebSocketServer } from 'ws';
import { type FloorRecord, FloorSpanStore } from './floor-spans.ts';

const modeAt = process.argv.indexOf('--mode');
const mode = modeAt === -1 ? 'raw' : (process.argv[modeAt + 1] ?? 'raw');
const store = mode === 'spans' ? new FloorSpanStore(100_000) : undefined;
const open = new Map<string, FloorRecord>();

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
let worker: WebSocket | undefined;
let caller: WebSocket | undefined;

function fromCaller(data: Buffer, isBinary: boolean): void {
  if (mode === 'raw') {
    worker?.send(data, { binary: isBinary });
    return;
  }
  const frame = JSON.parse(data.toString());
  if (store && frame.type === 'invokefunction' && !frame.traceparent) {
    const span = store.open(`call ${frame.function_id}`, ['eng.function.id', frame.function_id, 'eng.invocation.id', frame.invocation_id]);
    open.set(frame.invocation_id, span.record);
    frame.traceparent = span.traceparent;
  }
  worker?.send(JSON.stringify(frame));
}

function fromWorker(data: Buffer, isBinary: boolean): void {
  if (mode === 'raw') {
    caller?.send(data, { binary: isBinary });
    return;
  }
  const frame = JSON.parse(data.toString());
  const record = store ? open.get(frame.invocation_id) : undefined;
  if (record && store) {
    open.delete(frame.invocation_id);
    store.close(record, frame.error ? 2 : 1);
  }
  caller?.send(JSON.stringify(frame));
}

wss.on('connection', (ws, req) => {
  if (req.url?.includes('role=worker')) {
    worker = ws;
    ws.on('message', (data, isBinary) => fromWorker(data as Buffer, isBinary));
  } else {
    caller = ws;
    ws.on('message', (data, isBinary) => fromCaller(data as Buffer, isBinary));
  }
});
wss.on('listening', () => {
  const address = wss.address();
  process.stdout.write(`relay: ready ${typeof address === 'object' && address ? address.port : address}\n`);
});
process.on('SIGTERM', () => process.exit(0));
