/**
 * An iii-sdk worker in its own process (the SDK's OpenTelemetry setup is per process, so each
 * service of a traced call chain needs one). Used by observability.test.ts.
 *
 * Environment: ENG_URL, OTEL_SERVICE_NAME, ROLE (`a`, `b` or `legacy`).
 *   ROLE=a registers `chain::a` (logs, then calls `chain::b`) and `chain::a_fails` (calls `chain::fail`).
 *   ROLE=b registers `chain::b` (sleeps 30 ms), `chain::fail` (throws "card declined") and
 *   `chain::slow` (answers after 1.5 s).
 *   ROLE=legacy runs iii-sdk 0.11.6 instead and registers `legacy::hello` (logs, answers).
 *   ROLE=b-eng serves role b with our @eng/sdk, so one traced chain crosses both SDKs.
 * Prints `{"event":"ready","worker_id"}` once registered.
 */
// 0.22.1 moved the Logger to @iii-dev/helpers (engine-protocol §9 row 11); it shares iii-sdk's OTel setup
import { Logger } from '@iii-dev/helpers/observability';
import * as legacySdk from 'iii-sdk-0.11.6';
import { registerWorker } from 'iii-sdk-0.22.1';

const url = process.env.ENG_URL as string;
const role = process.env.ROLE ?? 'a';

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(2), 5 * 60_000).unref();

if (role === 'b-eng') {
  const { connect } = await import('@eng/sdk');
  const eng = connect(url, { name: 'chain-b', tracing: { serviceName: process.env.OTEL_SERVICE_NAME ?? 'svc-b' } });
  eng.registerFunction('chain::b', async (input: { id: string }, ctx) => {
    await new Promise((r) => setTimeout(r, 30));
    ctx.log.warn(`chain b done ${input.id}`);
    return { from: 'b', id: input.id };
  });
  eng.registerFunction('chain::fail', async () => {
    throw new Error('card declined');
  });
  eng.registerFunction('chain::slow', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    return { slow: true };
  });
  await eng.ready();
  await eng.call('engine::functions::list', {});
  process.stdout.write(`${JSON.stringify({ event: 'ready', worker_id: eng.workerId })}\n`);
  await new Promise(() => undefined); // serve until stdin closes
}

// only the SDK this role uses is started (each sets up OpenTelemetry for the whole process)
const sdk = role === 'legacy' ? legacySdk : { registerWorker, Logger };
const iii = sdk.registerWorker(url, { workerName: `chain-${role}`, reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 } });
const logger = new sdk.Logger();

if (role === 'legacy') {
  iii.registerFunction('legacy::hello', async (input: { name?: string }) => {
    logger.info(`legacy hello ${input.name ?? ''}`, { sdk: '0.11.6' });
    return { hello: input.name };
  });
} else if (role === 'a') {
  iii.registerFunction('chain::a', async (input: { id?: string; path_params?: { id?: string } }) => {
    const id = input.path_params?.id ?? input.id ?? 'none';
    logger.info(`chain a handling ${id}`, { order_id: id });
    const b = await iii.trigger({ function_id: 'chain::b', payload: { id } });
    return { status_code: 200, body: { from: 'a', b } };
  });
  iii.registerFunction('chain::a_fails', async () => {
    return iii.trigger({ function_id: 'chain::fail', payload: {} });
  });
  iii.registerTrigger({ type: 'http', function_id: 'chain::a', config: { api_path: 'chain/:id', http_method: 'GET' } });
} else {
  iii.registerFunction('chain::b', async (input: { id: string }) => {
    await new Promise((r) => setTimeout(r, 30));
    logger.warn(`chain b done ${input.id}`);
    return { from: 'b', id: input.id };
  });
  iii.registerFunction('chain::fail', async () => {
    throw new Error('card declined');
  });
  iii.registerFunction('chain::slow', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    return { slow: true };
  });
}

await iii.trigger({ function_id: 'engine::functions::list', payload: {} });
process.stdout.write(`${JSON.stringify({ event: 'ready', worker_id: (iii as { workerId?: string }).workerId })}\n`);

process.on('SIGTERM', () => {
  void iii.shutdown().finally(() => process.exit(0));
});
