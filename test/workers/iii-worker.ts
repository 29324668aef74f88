/**
 * A worker written with the published iii-sdk, run as its own process by the compat tests
 * (packages/engine/test/compat) for what needs a separate process: a pid of its own, or a worker
 * killed mid-call (spec: engine-protocol §11 items 1 and 12).
 *
 * Environment:
 *   ENG_URL          engine bus URL
 *   III_SDK_VERSION  '0.22.1' | '0.11.6' (the npm alias `iii-sdk-<version>` is imported)
 *   WORKER_NAME      workerName passed to registerWorker
 *   PREFIX           function id prefix: registers `<PREFIX>::echo` and `<PREFIX>::hang`
 *   BIND             optional JSON array of `{type, function_id, config}` triggers to bind
 *
 * Reports on stdout, one JSON object per line: `{"event":"ready","worker_id","pid"}` once its
 * registrations reached the engine, `{"event":"invoked","function_id","input"}` when a handler runs.
 */

const url = process.env.ENG_URL ?? 'ws://127.0.0.1:49134';
const version = process.env.III_SDK_VERSION ?? '0.22.1';
const prefix = process.env.PREFIX ?? 'child';
const binds = JSON.parse(process.env.BIND ?? '[]') as Array<{ type: string; function_id: string; config: unknown }>;

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

// The test process owns this worker: when it goes away (stdin closes), so do we.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
// backstop against a leaked process if the parent was killed without closing our stdin
setTimeout(() => process.exit(2), 5 * 60_000).unref();

const sdk = await import(`iii-sdk-${version}`);
const iii = sdk.registerWorker(url, {
  workerName: process.env.WORKER_NAME ?? `${prefix}-worker`,
  reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
});

iii.registerFunction(`${prefix}::echo`, async (input: unknown) => {
  emit({ event: 'invoked', function_id: `${prefix}::echo`, input });
  return input;
});
iii.registerFunction(`${prefix}::hang`, async (input: unknown) => {
  emit({ event: 'invoked', function_id: `${prefix}::hang`, input });
  return new Promise(() => {});
});
for (const bind of binds) iii.registerTrigger(bind);

// One round trip: the engine handles a connection's frames in order, so our registrations are in.
await iii.trigger({ function_id: 'engine::functions::list', payload: {} });
emit({ event: 'ready', worker_id: (iii as { workerId?: string }).workerId, pid: process.pid });

process.on('SIGTERM', () => {
  void iii.shutdown().finally(() => process.exit(0));
});
