import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import type { EmbeddedFile } from '../src/embedded-types.ts';
import { emptyDir, ensureBundle, runWorker, startWorker, type WorkerProcess } from './helpers.ts';

// Seed table 4.2 and console-worker spec §1.4–1.6, against the worker as a real process whose
// working directory is an empty folder: everything it serves comes from the compiled-in bundle.

const SECURITY = {
  'content-security-policy': "frame-ancestors 'none'; object-src 'none'; base-uri 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

function expectSecurityHeaders(res: Response): void {
  for (const [name, value] of Object.entries(SECURITY)) expect(res.headers.get(name), name).toBe(value);
}

let files: readonly EmbeddedFile[];

beforeAll(async () => {
  ensureBundle();
  ({ FILES: files } = await import('../src/generated/bundle.gen.mjs'));
}, 180_000);

describe('console worker HTTP routes (seed 4.2)', () => {
  let worker: WorkerProcess;
  beforeAll(async () => {
    // no engine at this URL: the UI is served all the same
    worker = await startWorker(['--http-port', '0', '--url', `ws://127.0.0.1:${await freePort()}`]);
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('GET / serves the embedded index.html, revalidated on every load', async () => {
    const res = await fetch(`${worker.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache, must-revalidate');
    expectSecurityHeaders(res);
    const html = await res.text();
    expect(html).toContain('id="root"');
    expect(html).toContain('./assets/');
    const etag = res.headers.get('etag') as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${worker.base}/`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('no-cache, must-revalidate');
    const head = await fetch(`${worker.base}/?x=1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
  });

  it('GET /assets/* serves every bundled file with its content type, length and an immutable cache', async () => {
    const assets = files.filter((f) => f.path.startsWith('/assets/'));
    expect(assets.length).toBeGreaterThan(2);
    const types = new Map<string, string>();
    for (const file of assets) {
      const res = await fetch(`${worker.base}${file.path}`, { headers: { 'accept-encoding': 'identity' } });
      expect(res.status, file.path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.equals(Buffer.from(file.body, 'base64')), file.path).toBe(true);
      expect(Number(res.headers.get('content-length'))).toBe(body.length);
      expectSecurityHeaders(res);
      types.set(file.path.slice(file.path.lastIndexOf('.')), res.headers.get('content-type') as string);
    }
    expect(types.get('.js')).toBe('text/javascript; charset=utf-8');
    expect(types.get('.css')).toBe('text/css; charset=utf-8');
    if (types.has('.woff2')) expect(types.get('.woff2')).toBe('font/woff2');
  });

  it('compresses text assets for clients that accept brotli or gzip', async () => {
    const js = files.find((f) => f.path.endsWith('.js') && f.br && f.gzip) as EmbeddedFile;
    const original = Buffer.from(js.body, 'base64');
    const br = await import('node:http').then(
      (http) =>
        new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
          http
            .get(`${worker.base}${js.path}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
            })
            .on('error', reject);
        }),
    );
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(brotliDecompressSync(br.body).equals(original)).toBe(true);
    const gz = await new Promise<Buffer>((resolve, reject) => {
      import('node:http').then((http) =>
        http
          .get(`${worker.base}${js.path}`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
            expect(res.headers['content-encoding']).toBe('gzip');
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks)));
          })
          .on('error', reject),
      );
    });
    expect(gunzipSync(gz).equals(original)).toBe(true);
  });

  it('answers 404 for anything else, 405 for other methods and 426 for /ws without an upgrade', async () => {
    for (const path of ['/index.html', '/nope', '/assets/', '/assets/missing-abc123.js', '/_consolex', '/ws/other', '/../package.json']) {
      const res = await fetch(`${worker.base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toBe('not found\n');
      expectSecurityHeaders(res);
    }
    const post = await fetch(`${worker.base}/`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    for (const path of ['/ws', '/ws/streams']) expect((await fetch(`${worker.base}${path}`)).status, path).toBe(426);
  });

  it('logs where the UI is and the engine it proxies to', () => {
    expect(worker.logs()).toMatch(
      /console ready — UI on http:\/\/127\.0\.0\.1:\d+\/, \/ws proxies to ws:\/\/127\.0\.0\.1:\d+; engine HTTP http:\/\/127\.0\.0\.1:3111, streams ws:\/\/127\.0\.0\.1:3112/,
    );
  });
});

describe('console worker flags and configuration (seed 4.4)', () => {
  it('--manifest prints the publish manifest and exits 0 without connecting', async () => {
    const started = Date.now();
    const r = await runWorker(['--manifest', '--url', 'ws://127.0.0.1:1']);
    expect(r.code).toBe(0);
    const manifest = JSON.parse(r.stdout);
    expect(Object.keys(manifest).sort()).toEqual(['default_config', 'description', 'name', 'supported_targets', 'version']);
    expect(manifest.name).toBe('console');
    expect(manifest.version).toBe('0.1.0');
    expect(manifest.description.length).toBeGreaterThan(10);
    expect(manifest.default_config).toEqual({ http_port: 3113 });
    expect(manifest.supported_targets).toEqual([expect.stringMatching(/^(x86_64|aarch64|\w+)-/)]);
    expect(r.stderr).toBe('');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('--help and --version exit 0; bad flags exit 2 with a reason', async () => {
    // five independent processes, started together (one after another they took over 30 s at load 15)
    const [help, version, unknown, port, url] = await Promise.all([
      runWorker(['--help']),
      runWorker(['--version']),
      runWorker(['--nope']),
      runWorker(['--http-port', 'eighty']),
      runWorker(['--url', 'http://127.0.0.1:49134']),
    ]);
    expect(help.code).toBe(0);
    for (const flag of ['--config', '--url', '--http-port', '--manifest']) expect(help.stdout).toContain(flag);
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option '--nope'/);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--http-port must be a port number/);
    expect(url.code).toBe(2);
    expect(url.stderr).toMatch(/--url must be a ws:\/\/ or wss:\/\/ URL/);
  });

  it('reads http_port from ./config.yaml, or from the console entry of an engine config', async () => {
    const dir = emptyDir();
    const port = await freePort();
    writeFileSync(join(dir, 'config.yaml'), `http_port: ${port}\n`);
    const plain = await startWorker(['--url', 'ws://127.0.0.1:1'], { cwd: dir });
    expect(plain.ready.http_port).toBe(port);
    await plain.stop();

    const enginePort = await freePort();
    const engineConfig = join(dir, 'engine.yaml');
    writeFileSync(
      engineConfig,
      `workers:\n  - name: eng-worker-manager\n  - name: console\n    config:\n      http_port: \${CW_TEST_PORT:${enginePort}}\n`,
    );
    const fromList = await startWorker(['--config', engineConfig, '--url', 'ws://127.0.0.1:1']);
    expect(fromList.ready.http_port).toBe(enginePort);
    await fromList.stop();
  });

  it('ENG_WORKER_CONFIG beats the file, and --http-port beats both', async () => {
    const dir = emptyDir();
    writeFileSync(join(dir, 'config.yaml'), `http_port: ${await freePort()}\n`);
    const supervised = await freePort();
    const a = await startWorker(['--url', 'ws://127.0.0.1:1'], {
      cwd: dir,
      env: { ENG_WORKER_CONFIG: JSON.stringify({ http_port: supervised }) },
    });
    expect(a.ready.http_port).toBe(supervised);
    await a.stop();
    const flag = await freePort();
    const b = await startWorker(['--url', 'ws://127.0.0.1:1', '--http-port', String(flag)], {
      cwd: dir,
      env: { ENG_WORKER_CONFIG: JSON.stringify({ http_port: supervised }) },
    });
    expect(b.ready.http_port).toBe(flag);
    await b.stop();
  });

  it('refuses invalid configuration values, naming the key', async () => {
    const dir = emptyDir();
    writeFileSync(join(dir, 'config.yaml'), 'http_port: "a lot"\n');
    const file = await runWorker(['--url', 'ws://127.0.0.1:1'], { cwd: dir });
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/config\.yaml: http_port: /);
    const env = await runWorker(['--url', 'ws://127.0.0.1:1'], { env: { ENG_WORKER_CONFIG: '{"http_port": 70000}' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/ENG_WORKER_CONFIG: http_port: must be 0-65535/);
    const json = await runWorker(['--url', 'ws://127.0.0.1:1'], { env: { ENG_WORKER_CONFIG: '{http_port' } });
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/ENG_WORKER_CONFIG is not valid JSON/);
  });

  it('exits 1 with a readable reason when the port is taken', async () => {
    const first = await startWorker(['--http-port', '0', '--url', 'ws://127.0.0.1:1']);
    const r = await runWorker(['--http-port', String(first.ready.http_port), '--url', 'ws://127.0.0.1:1']);
    await first.stop();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/port \d+ on 127\.0\.0\.1 is in use/);
  });
});

describe('console::status through the engine (seed 2.10)', () => {
  let engine: EngineProcess;
  let worker: WorkerProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine();
    worker = await startWorker(['--http-port', '0', '--url', `ws://probe:hunter2@127.0.0.1:${engine.busPort}`]);
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await worker?.stop();
    await engine?.stop();
  });

  async function status(data: unknown) {
    for (let i = 0; ; i++) {
      const frame = await client.call('console::status', data);
      if ((frame.error as { code?: string })?.code !== 'function_not_found' || i > 100) return frame;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('returns {http_port, engine_url, version, url}, engine_url without credentials', async () => {
    const frame = await status({});
    expect(frame.error).toBeUndefined();
    expect(frame.result).toEqual({
      http_port: worker.ready.http_port,
      engine_url: `ws://127.0.0.1:${engine.busPort}`,
      version: '0.1.0',
      url: `http://127.0.0.1:${worker.ready.http_port}/`,
    });
    const res = await fetch((frame.result as { url: string }).url);
    expect(res.status).toBe(200);
  });

  it('refuses input other than an empty object with INVALID_ARGUMENTS', async () => {
    for (const bad of [{ verbose: true }, 'status', [1], 42]) {
      const frame = await status(bad);
      expect(frame.result).toBeUndefined();
      expect(frame.error).toMatchObject({
        code: 'INVALID_ARGUMENTS',
        message: expect.stringContaining('console::status takes an empty object'),
      });
    }
    expect(((await status({ verbose: true })).error as { message: string }).message).toMatch(/verbose/);
  });

  it('is hidden from discovery but registered by a worker named console', async () => {
    const { functions } = await client.result('engine::functions::list', {});
    expect(functions.map((f: { function_id: string }) => f.function_id)).not.toContain('console::status');
    const all = await client.result('engine::functions::list', { include_internal: true });
    expect(all.functions.map((f: { function_id: string }) => f.function_id)).toContain('console::status');
    const { workers } = await client.result('engine::workers::list', {});
    expect(workers.some((w: { name?: string; pid?: number }) => w.name === 'console' && w.pid === worker.ready.pid)).toBe(true);
  });

  it('never prints the password of the engine URL', () => {
    expect(worker.logs()).toContain(`ws://127.0.0.1:${engine.busPort}`);
    expect(worker.logs()).not.toContain('hunter2');
  });
});
