/**
 * Reference for bench/mcp: a worker in its own process, where eng-mcp sits, that does no MCP at
 * all. It answers an HTTP trigger (POST /bench/relay) by calling `bench::echo` through the engine
 * and returning the result: the topology of a tools/call over HTTP (client → eng-http → eng-mcp →
 * engine → worker and back) without the MCP layer, i.e. the cost of the process hops themselves.
 *
 * With `--stdio` it relays over its stdin/stdout instead, as eng-mcp does over stdio: each line in
 * is a JSON payload, called as `bench::echo` through the engine, and each line out is the JSON
 * result (`{"error": "..."}` when the call failed), in order. The topology of a stdio tools/call
 * (client → pipe → eng-mcp → engine → worker and back) without MCP.
 *
 *   node --import tsx bench/relay-worker.ts <engine bus url> [--stdio]   → prints "relay-worker: ready"
 *                                                                          (on stderr with --stdio)
 */
import { connect } from '@eng/sdk';

const url = process.argv[2] ?? 'ws://127.0.0.1:49134';
const overStdio = process.argv.includes('--stdio');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const client = connect(url, { name: overStdio ? 'bench-stdio-relay' : 'bench-relay', logger: quiet });
if (overStdio) {
  let pending = '';
  // answers go out in the order the lines came in, whatever order the engine answers them
  let queue: Promise<void> = Promise.resolve();
  const relay = (line: string) => {
    let payload: unknown;
    let answer: Promise<unknown>;
    try {
      payload = JSON.parse(line);
      answer = client.call('bench::echo', payload);
    } catch (err) {
      answer = Promise.reject(err);
    }
    const text = answer.then(
      (result) => JSON.stringify(result ?? null),
      (err: unknown) => JSON.stringify({ error: err instanceof Error ? err.message : String(err) }),
    );
    queue = queue.then(async () => {
      process.stdout.write(`${await text}\n`);
    });
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') relay(line);
      newline = pending.indexOf('\n');
    }
  });
  process.stdin.once('end', () => void queue.then(() => client.close()).finally(() => process.exit(0)));
} else {
  client.registerFunction('bench::http_relay', async (req: { body?: unknown }) => ({
    status_code: 200,
    body: await client.call('bench::echo', req.body),
  }));
  client.registerTrigger({ type: 'http', function_id: 'bench::http_relay', config: { api_path: 'bench/relay', http_method: 'POST' } });
}
await client.ready();
(overStdio ? process.stderr : process.stdout).write('relay-worker: ready\n');
process.once('SIGTERM', () => void client.close().finally(() => process.exit(0)));
