import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { connect as connectBrowser, type EngClient } from '@eng/sdk/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { client, closeClients, functionListed, quietLogger, recordingWebSocket } from './helpers.ts';

// The browser entry runs here on `ws` driven through the standard WebSocket API (onopen,
// onmessage, binaryType), which is exactly the surface it uses in a browser.

let engine: EngineProcess;
const browsers: EngClient[] = [];
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(async () => {
  await Promise.all(browsers.splice(0).map((b) => b.close()));
  await closeClients();
});
afterAll(async () => {
  await engine?.stop();
});

function browserClient(sent: string[] = [], heartbeatMs?: number): EngClient {
  const c = connectBrowser(engine.busUrl, { WebSocket: recordingWebSocket(sent), heartbeatMs, logger: quietLogger });
  browsers.push(c);
  return c;
}

describe('browser entry', () => {
  it('calls and serves functions, and registers as a browser worker without a pid', async () => {
    const sent: string[] = [];
    const page = browserClient(sent);
    page.registerFunction('page::greet', (input: { name: string }) => `hello ${input.name}`);
    await page.ready();
    const node = client(engine.busUrl);
    await node.ready();
    await functionListed(node, 'page::greet');
    expect(await node.call('page::greet', { name: 'node' })).toBe('hello node');
    expect(await page.call('engine::functions::list', {})).toHaveProperty('functions');

    const register = sent.map((t) => JSON.parse(t)).find((f) => f.function_id === 'engine::workers::register');
    expect(register.data).toMatchObject({ runtime: 'browser', version: '0.1.0' });
    expect(register.data.pid).toBeUndefined();
  });

  it('keeps alive with app-level ping messages instead of control frames', async () => {
    const sent: string[] = [];
    // every 500 ms: the client gives up after 3 silent intervals, and 300 ms (at 100 ms) is within
    // one scheduling stall of a loaded CI machine, which dropped a healthy connection with 1006
    const page = browserClient(sent, 500);
    const drops: number[] = [];
    page.on('disconnected', ({ code }) => drops.push(code));
    await page.ready();
    // five pings (at least 2 s) with no drop
    await waitFor(() => sent.filter((t) => t === '{"type":"ping"}').length >= 5, 30_000);
    expect(drops).toEqual([]);
    expect(sent.filter((t) => t === '{"type":"ping"}').length).toBeGreaterThanOrEqual(5);
  });

  it('streams bytes through a channel with ArrayBuffer frames', async () => {
    const page = browserClient();
    await page.ready();
    const channel = await page.createChannel();
    const data = new Uint8Array(200_000).map((_, i) => i % 251);
    const reading = channel.reader.readAll();
    await channel.writer.write(data);
    await channel.writer.end();
    expect(Buffer.from(await reading).equals(Buffer.from(data))).toBe(true);
  });

  it('never imports ws or node built-ins, so bundlers can ship it', () => {
    const src = resolve(import.meta.dirname, '../src');
    const seen = new Set<string>();
    const external: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'/g)) {
        const spec = (match[1] ?? match[2]) as string;
        if (spec.startsWith('.')) visit(join(dirname(file), spec));
        else external.push(spec);
      }
    };
    visit(join(src, 'browser.ts'));
    expect(seen.size).toBeGreaterThan(5);
    expect(external.filter((s) => s === 'ws' || s.startsWith('node:'))).toEqual([]);
    expect(new Set(external)).toEqual(new Set(['@eng/protocol']));
  });

  it('is what the package resolves to under the browser export condition', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8'));
    // the build of src/browser.ts for bundlers, the source itself for this repository's tests
    expect(pkg.exports['.'].browser).toEqual({ types: './dist/browser.d.ts', default: './dist/browser.js' });
    expect(pkg.exports['.'].development).toEqual({ browser: './src/browser.ts', default: './src/index.ts' });
  });
});
