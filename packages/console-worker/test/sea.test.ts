import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { buildSea, SEA_BINARY, seaIsFresh } from '../scripts/build-sea.ts';
import { emptyDir, ensureBundle, startWorker, type WorkerProcess } from './helpers.ts';

// issue 7 §2: `npm run build:sea` makes one executable; it runs against a real engine from an
// empty directory, without tsx, node_modules or the UI files.

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

const SOURCES = [
  'packages/console-worker/src',
  'packages/console-worker/scripts',
  'packages/console/src',
  'packages/sdk/src',
  'packages/protocol/src',
];

describe('single executable (Node SEA)', () => {
  let engine: EngineProcess;
  let worker: WorkerProcess;
  beforeAll(async () => {
    ensureBundle();
    if (!seaIsFresh(Math.max(...SOURCES.map((s) => newest(join(REPO_ROOT, s)))))) {
      await buildSea((line) => process.stderr.write(`[sea] ${line}\n`));
    }
    engine = await startEngine();
    worker = await startWorker(['--http-port', '0', '--url', `ws://sea:pw@127.0.0.1:${engine.busPort}`], {
      command: SEA_BINARY,
      cwd: emptyDir(),
      // nothing of the repository on the path: no tsx, no node_modules
      env: { NODE_OPTIONS: '', NODE_PATH: '' },
    });
  }, 180_000);
  afterAll(async () => {
    await worker?.stop();
    await engine?.stop();
  });

  it('serves the embedded UI from an empty working directory', async () => {
    const res = await fetch(`${worker.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache, must-revalidate');
    const html = await res.text();
    expect(html).toContain('id="root"');
    const script = /src="\.(\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string;
    const asset = await fetch(`${worker.base}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('registers console::status on the engine and proxies /ws', async () => {
    const client = await RawClient.worker(engine.busUrl);
    let frame = await client.call('console::status', {});
    for (let i = 0; (frame.error as { code?: string })?.code === 'function_not_found' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      frame = await client.call('console::status', {});
    }
    expect(frame.result).toMatchObject({ http_port: worker.ready.http_port, engine_url: engine.busUrl, url: `${worker.base}/` });
    await client.close();
    const browser = await RawClient.worker(`${worker.base.replace('http', 'ws')}/ws`);
    expect((await browser.call('engine::functions::list', {})).result).toBeDefined();
    await browser.close();
  });

  it('prints its manifest and shuts down cleanly on SIGTERM', async () => {
    const manifest = spawnSync(SEA_BINARY, ['--manifest'], { cwd: emptyDir(), encoding: 'utf8' });
    expect(manifest.status).toBe(0);
    expect(JSON.parse(manifest.stdout)).toMatchObject({ name: 'console', default_config: { http_port: 3113 } });
    expect(worker.logs()).not.toContain('pw@');
    expect(worker.logs()).not.toMatch(/ExperimentalWarning|require\(\) only supports/);
    const exit = await worker.stop('SIGTERM');
    expect(exit.code).toBe(0);
  });
});
