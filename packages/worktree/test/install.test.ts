import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@eng/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { type EngineProcess, NODE_TS, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { makeRepos } from './helpers.ts';

// `eng worker add worktree` writes the entry, and the engine's supervisor launches the worker
// from it with the entry's config block as the seed of its configuration entry.

let engine: EngineProcess | undefined;
afterAll(async () => {
  await engine?.stop();
});

describe('eng worker add worktree', () => {
  it('adds the worker to config.yaml, and the engine runs it with its config block', async () => {
    const repos = makeRepos();
    const dir = mkdtempSync(join(tmpdir(), 'eng-wt-install-'));
    const configPath = join(dir, 'config.yaml');
    writeFileSync(configPath, ['workers:', '  - name: eng-worker-manager', '  - name: eng-state', '  - name: eng-queue', ''].join('\n'));
    const out = execFileSync(
      process.execPath,
      [...NODE_TS, join(REPO_ROOT, 'packages/engine/src/cli/main.ts'), 'worker', 'add', 'worktree', '-c', configPath],
      {
        encoding: 'utf8',
      },
    );
    expect(out).toContain('added worktree');
    const written = readFileSync(configPath, 'utf8');
    expect(written).toContain('name: worktree');

    // the root comes from the entry's config block (ENG_WORKER_CONFIG from the supervisor)
    const text = written
      .replace('name: eng-worker-manager', 'name: eng-worker-manager\n    config:\n      port: {{BUS_PORT}}')
      .replace('name: worktree', `name: worktree\n    config:\n      worktree_root: ${repos.root}\n      prune_schedule: ""`);
    engine = await startEngine({ configYaml: text, env: { ENG_LOG_LEVEL: 'warn', ...repos.env } });
    const client = connect(engine.busUrl, { name: 'install-test', tracing: false, reconnect: { maxRetries: 0 } });
    await client.ready({ timeoutMs: 10_000 });
    try {
      const created = await waitFor(
        () => client.call<{ path: string }>('worktree::create', { repo_path: repos.repo }, { timeoutMs: 20_000 }).catch(() => undefined),
        30_000,
        250,
      );
      expect(created.path.startsWith(`${repos.root}/`)).toBe(true);
      const workers = await client.call<{ workers: Array<{ name: string }> }>('engine::workers::list', {});
      expect(workers.workers.map((w) => w.name)).toContain('worktree');
    } finally {
      await client.close();
    }
  });
});
