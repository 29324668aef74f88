/**
 * Installing the chat stack: `eng worker add harness` writes all seven chat workers into the
 * configuration and `remove` takes them out; an engine started with them launches every role
 * whose code is in this build (the session store and the approval gate serve at once) and says
 * which ones it cannot launch; the `eng-chat` launcher refuses unknown or missing roles clearly;
 * a role shuts down cleanly on SIGTERM.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type EngineProcess, engArgs, NODE_TS, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { CHAT_ROLES } from '../src/roles.ts';
import { startRole, testClient } from '../src/shared/test-support.ts';

const STACK = ['session-manager', 'approval-gate', 'llm-router', 'provider-openai', 'provider-anthropic', 'context-manager', 'harness'];
const eng = (args: string[]) => spawnSync(process.execPath, engArgs(args), { cwd: REPO_ROOT, encoding: 'utf8' });
const names = (file: string) => (parseYaml(readFileSync(file, 'utf8')) as { workers: Array<{ name: string }> }).workers.map((w) => w.name);

let engine: EngineProcess | undefined;
afterAll(() => engine?.stop());

describe('eng worker add / remove harness', () => {
  it('adds the whole chat stack once and removes it again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-chat-install-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'workers:\n  - name: eng-worker-manager\n  - name: eng-state\n  - name: session-manager\n');
    const added = eng(['worker', 'add', 'harness', '-c', file]);
    expect(added.status, added.stderr).toBe(0);
    expect(added.stdout).toContain('added harness with approval-gate, llm-router, provider-openai, provider-anthropic, context-manager');
    expect(names(file)).toEqual(['eng-worker-manager', 'eng-state', ...STACK]);
    expect(eng(['worker', 'add', 'harness', '-c', file]).stdout).toContain('harness is already configured');

    const removed = eng(['worker', 'remove', 'harness', '-c', file]);
    expect(removed.status).toBe(0);
    expect(removed.stdout).toContain(`removed ${STACK.join(', ')}`);
    expect(names(file)).toEqual(['eng-worker-manager', 'eng-state']);
    // one role on its own
    expect(eng(['worker', 'add', 'approval-gate', '-c', file]).status).toBe(0);
    expect(names(file)).toEqual(['eng-worker-manager', 'eng-state', 'approval-gate']);
  });

  it('lists the chat workers among the known names', () => {
    const unknown = eng(['worker', 'add', 'no-such-worker', '-c', join(mkdtempSync(join(tmpdir(), 'eng-chat-')), 'c.yaml')]);
    expect(unknown.status).toBe(1);
    for (const name of STACK) expect(unknown.stderr).toContain(name);
  });
});

describe('an engine configured with the chat stack', () => {
  it('launches every role in this build, serves sessions and approvals, and names the roles it cannot launch', async () => {
    engine = await startEngine({
      workersYaml: [
        '  - name: eng-state',
        '    config:',
        '      adapter: { name: kv, config: { store_method: in_memory } }',
        ...STACK.map((name) => `  - name: ${name}`),
        '',
      ].join('\n'),
      env: { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    });
    const client = await testClient(engine.busUrl, 'install-test');
    try {
      const present = STACK.filter((name) => {
        const role = Object.values(CHAT_ROLES).find((r) => r.worker === name);
        return role && existsSync(join(REPO_ROOT, 'packages/harness/src', role.module));
      });
      expect(present).toEqual(expect.arrayContaining(['session-manager', 'approval-gate']));
      await waitFor(async () => {
        const { workers } = await client.call<{ workers: Array<{ name: string }> }>('engine::workers::list', {});
        const connected = new Set(workers.map((w) => w.name));
        return ['session-manager', 'approval-gate'].every((n) => connected.has(n));
      }, 30_000);
      const { workers } = await client.call<{ workers: Array<{ name: string; running: boolean }> }>('engine::supervisor::list', {});
      expect(workers.map((w) => w.name).sort()).toEqual([...present].sort());
      for (const name of STACK.filter((n) => !present.includes(n))) {
        expect(engine.logs()).toMatch(
          new RegExp(`worker "${name}" is configured but cannot be launched: ${name} is not in this build yet`),
        );
      }

      await waitFor(() => client.call('session::list', {}).then(() => true), 15_000);
      const { session_id } = await client.call<{ session_id: string }>('session::create', { title: 'installed' });
      await waitFor(() => client.call('approval::list-pending', {}).then(() => true), 15_000);
      expect(await client.call('approval::get-settings', { session_id })).toMatchObject({ source: 'defaults' });
    } finally {
      await client.close();
    }
    // stopping the engine stops the roles with SIGTERM; they leave cleanly and say so
    await engine.stop();
    for (const name of ['session-manager', 'approval-gate']) {
      const log = readFileSync(join(engine.dataDir, 'logs', `${name}.log`), 'utf8');
      expect(log).toContain(`${name}: ready — `);
      expect(log).toContain(`${name}: SIGTERM received; shutting down`);
    }
  });
});

describe('the eng-chat launcher', () => {
  it('refuses an unknown role with the list of roles', () => {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'packages/harness/bin/eng-chat.js'), 'nonsense'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown role "nonsense"');
    for (const role of Object.keys(CHAT_ROLES)) expect(r.stderr).toContain(role);
  });

  it('says which file is missing for a role whose code is not in the build', () => {
    // the launcher and its role table alone, without any role module beside them
    const dir = mkdtempSync(join(tmpdir(), 'eng-chat-launcher-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
    for (const f of ['main.ts', 'roles.ts']) copyFileSync(join(REPO_ROOT, 'packages/harness/src', f), join(dir, 'src', f));
    const r = spawnSync(process.execPath, [...NODE_TS, join(dir, 'src/main.ts'), 'router'], { encoding: 'utf8' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('role "router" (llm-router) is not available in this build: router/worker.ts is missing');
  });

  it('a role leaves cleanly on SIGTERM', async () => {
    const local = await startEngine({
      workersYaml: '  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n',
    });
    try {
      const role = startRole(local.busUrl, 'approval');
      await role.ready;
      expect(await role.stop()).toBe(0);
      expect(role.output()).toContain('approval-gate: SIGTERM received; shutting down');
    } finally {
      await local.stop();
    }
  });
});
