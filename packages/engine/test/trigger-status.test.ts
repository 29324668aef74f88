/**
 * What Triggers lists is what fires: a route shadowed by a later binding of the same method and path
 * says so and takes the route back when the later one leaves; a binding its provider refused (a bad
 * cron expression) is listed as Error with the reason instead of vanishing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';

let engine: EngineProcess;
let http: string;
let observer: RawClient;

interface Listed {
  id: string;
  status: string;
  error?: string;
}

beforeAll(async () => {
  engine = await startEngine({ workersYaml: '  - name: eng-cron\n  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n' });
  http = (engine.addresses.http as { url: string }).url;
  observer = await RawClient.worker(engine.busUrl);
});
afterAll(async () => {
  await observer?.terminate();
  await engine?.stop();
});

/** A worker that serves `functionId` behind GET /<path>, answering with its own name. */
async function routeWorker(name: string, bindingId: string, path: string): Promise<RawClient> {
  const worker = await RawClient.worker(engine.busUrl);
  const functionId = `shadow::${name}`;
  worker.send({ type: 'registerfunction', id: functionId });
  worker.send({
    type: 'registertrigger',
    id: bindingId,
    trigger_type: 'http',
    function_id: functionId,
    config: { api_path: path, http_method: 'GET' },
  });
  worker.socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as RawFrame;
    if (frame.type === 'invokefunction' && frame.function_id === functionId)
      worker.send({
        type: 'invocationresult',
        invocation_id: frame.invocation_id,
        result: { status_code: 200, body: { served_by: name } },
      });
  });
  await waitFor(async () => (await listed()).some((t) => t.id === bindingId));
  return worker;
}

const listed = async (): Promise<Listed[]> => (await observer.result('engine::registered-triggers::list', {})).registered_triggers;
const statusOf = async (id: string) => (await listed()).find((t) => t.id === id);
const servedBy = async (path: string) => {
  const res = await fetch(`${http}/${path}`);
  return res.status === 200 ? ((await res.json()) as { served_by: string }).served_by : res.status;
};

describe('http routes bound twice', () => {
  it('the later binding serves, the earlier lists as shadowed, and takes the route back when the later one leaves', async () => {
    const first = await routeWorker('first', 'route-first', 'shared');
    expect(await servedBy('shared')).toBe('first');
    const second = await routeWorker('second', 'route-second', 'shared');
    expect(await servedBy('shared')).toBe('second');
    expect(await statusOf('route-second')).toMatchObject({ status: 'active' });
    const shadowed = await statusOf('route-first');
    expect(shadowed?.status).toBe('inactive');
    expect(shadowed?.error).toContain('shadowed: GET shared is served by trigger route-second');

    await second.close();
    await waitFor(async () => (await servedBy('shared')) === 'first', 10_000);
    expect(await statusOf('route-first')).toMatchObject({ status: 'active' });
    expect((await statusOf('route-first'))?.error).toBeUndefined();
    expect(await statusOf('route-second')).toBeUndefined();

    await first.close();
    await waitFor(async () => (await servedBy('shared')) === 404, 10_000);
  });

  it('a shadowed binding that leaves first is forgotten: the route goes when its server leaves', async () => {
    const first = await routeWorker('early', 'route-early', 'other');
    const second = await routeWorker('late', 'route-late', 'other');
    await first.close();
    await waitFor(async () => (await statusOf('route-early')) === undefined);
    expect(await servedBy('other')).toBe('late');
    await second.close();
    await waitFor(async () => (await servedBy('other')) === 404, 10_000);
  });
});

describe('a binding its provider refuses', () => {
  it('is listed as Error with the reason, answers the worker with the error, and leaves with its worker', async () => {
    const worker = await RawClient.worker(engine.busUrl);
    worker.send({ type: 'registerfunction', id: 'status::tick' });
    worker.send({
      type: 'registertrigger',
      id: 'bad-cron',
      trigger_type: 'cron',
      function_id: 'status::tick',
      config: { expression: 'every tuesday' },
    });
    const result = await worker.next((f) => f.type === 'triggerregistrationresult' && f.id === 'bad-cron');
    expect(result.error).toMatchObject({ code: 'trigger_registration_failed' });
    const entry = await waitFor(() => statusOf('bad-cron'));
    expect(entry.status).toBe('error');
    expect(entry.error).toContain('invalid cron expression "every tuesday"');
    // fixed and registered again under the same id: active
    worker.send({
      type: 'registertrigger',
      id: 'bad-cron',
      trigger_type: 'cron',
      function_id: 'status::tick',
      config: { expression: '0 0 * * * *' },
    });
    await waitFor(async () => (await statusOf('bad-cron'))?.status === 'active');
    await worker.close();
    await waitFor(async () => (await statusOf('bad-cron')) === undefined);
  });
});
