/**
 * Reference for bench/mcp: a worker in its own process, where eng-mcp sits, that does no MCP at
 * all. It answers an HTTP trigger (POST /bench/relay) by calling `bench::echo` through the engine
 * and returning the result: the topology of a tools/call over HTTP (client → eng-http → eng-mcp →
 * engine → worker and back) without the MCP layer, i.e. the cost of the process hops themselves.
 *
 *   node --import tsx bench/relay-worker.ts <engine bus url>   → prints "relay-worker: ready"
 */
import { connect } from '@eng/sdk';

const url = process.argv[2] ?? 'ws://127.0.0.1:49134';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const client = connect(url, { name: 'bench-relay', logger: quiet });
client.registerFunction('bench::http_relay', async (req: { body?: unknown }) => ({
  status_code: 200,
  body: await client.call('bench::echo', req.body),
}));
client.registerTrigger({ type: 'http', function_id: 'bench::http_relay', config: { api_path: 'bench/relay', http_method: 'POST' } });
await client.ready();
process.stdout.write('relay-worker: ready\n');
process.once('SIGTERM', () => void client.close().finally(() => process.exit(0)));
