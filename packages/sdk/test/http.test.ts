import { type ChannelReader, ChannelWriter } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { client, closeClients } from './helpers.ts';

// spec: engine-protocol §5.2, §6.1 — HTTP triggers served by an SDK worker, with the request body
// and the response as channels (§2.11) resolved into live ends before the handler runs.

let engine: EngineProcess;
let httpUrl: string;
beforeAll(async () => {
  engine = await startEngine({ workersYaml: '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n' });
  httpUrl = `http://127.0.0.1:${engine.ports.HTTP}`;
});
afterEach(closeClients);
afterAll(async () => {
  await engine?.stop();
});

interface HttpInput {
  body: unknown;
  path_params: Record<string, string>;
  request_body: ChannelReader;
  response: ChannelWriter;
}

/** Wait until the route answers something other than 404 (the binding is asynchronous). */
async function routeReady(path: string, init: RequestInit): Promise<Response> {
  return waitFor(async () => {
    const res = await fetch(`${httpUrl}${path}`, init);
    return res.status === 404 ? undefined : res;
  });
}

describe('http triggers', () => {
  it('answers with the status and body the handler returns', async () => {
    const worker = client(engine.busUrl);
    worker.registerFunction('sdk::create-item', (input: HttpInput) => ({
      status_code: 201,
      body: { created: input.body, id: input.path_params.id },
    }));
    worker.registerTrigger({ type: 'http', function_id: 'sdk::create-item', config: { api_path: 'items/:id', http_method: 'POST' } });
    await worker.ready();
    const res = await routeReady('/items/7', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ created: { name: 'x' }, id: '7' });
  });

  it('streams the response through the channel writer and reads the raw request body', async () => {
    const worker = client(engine.busUrl);
    worker.registerFunction('sdk::shout', async (input: HttpInput) => {
      if (!(input.response instanceof ChannelWriter)) throw new Error('response is not a ChannelWriter');
      const text = new TextDecoder().decode(await input.request_body.readAll());
      await input.response.sendMessage(JSON.stringify({ type: 'set_status', status_code: 202 }));
      await input.response.sendMessage(JSON.stringify({ type: 'set_headers', headers: { 'content-type': 'text/plain' } }));
      await input.response.write(text.toUpperCase());
      await input.response.write('!');
      await input.response.end();
    });
    worker.registerTrigger({ type: 'http', function_id: 'sdk::shout', config: { api_path: 'shout', http_method: 'POST' } });
    await worker.ready();
    const res = await routeReady('/shout', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'quiet please' });
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('QUIET PLEASE!');
  });
});
