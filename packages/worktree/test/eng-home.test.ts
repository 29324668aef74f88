import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engHome, resolveRoot } from '../src/config.ts';
import { type Rig, startRig } from './helpers.ts';

// Issue 25 item 11: the worker honours ENG_HOME as the engine CLI does. Its default root,
// `~/.eng/worktrees`, is `$ENG_HOME/worktrees` when the variable is set (it wrote to ~/.eng).

describe('resolveRoot', () => {
  it('reads ~/.eng under $ENG_HOME, and the home directory without it', () => {
    expect(engHome({ ENG_HOME: '/srv/eng' })).toBe('/srv/eng');
    expect(resolveRoot('~/.eng/worktrees', { ENG_HOME: '/srv/eng' })).toBe('/srv/eng/worktrees');
    expect(resolveRoot('~/.eng', { ENG_HOME: '/srv/eng' })).toBe('/srv/eng');
    expect(resolveRoot('~/.eng/worktrees', { HOME: '/home/u' })).toBe(join(engHome({}), 'worktrees'));
    // other roots are the user's own choice: ENG_HOME does not move them
    expect(resolveRoot('~/trees', { ENG_HOME: '/srv/eng' })).toMatch(/\/trees$/);
    expect(resolveRoot('~/trees', { ENG_HOME: '/srv/eng' })).not.toContain('/srv/eng');
    expect(resolveRoot('/abs/root', { ENG_HOME: '/srv/eng' })).toBe('/abs/root');
  });
});

describe('the worker with ENG_HOME set and the default root', () => {
  let rig: Rig;
  let engHomeDir: string;
  let fakeHome: string;
  beforeAll(async () => {
    engHomeDir = realpathSync(mkdtempSync(join(tmpdir(), 'eng-home-')));
    // HOME points elsewhere too, so a worktree written to ~/.eng would show (and not touch the real home)
    fakeHome = realpathSync(mkdtempSync(join(tmpdir(), 'eng-fake-home-')));
    rig = await startRig({ config: { worktree_root: undefined }, workerEnv: { ENG_HOME: engHomeDir, HOME: fakeHome } });
  }, 60_000);
  afterAll(async () => {
    await rig?.stop();
  });

  it('says its root is $ENG_HOME/worktrees and creates worktrees there', async () => {
    expect(rig.worker.output()).toContain(`root ${join(engHomeDir, 'worktrees')}`);
    const created = await rig.client.call<{ path: string }>('worktree::create', { repo_path: rig.repos.repo }, { timeoutMs: 20_000 });
    expect(created.path.startsWith(`${join(engHomeDir, 'worktrees')}/`)).toBe(true);
    expect(existsSync(join(created.path, 'README.md'))).toBe(true);
    expect(existsSync(join(fakeHome, '.eng'))).toBe(false);
  });
});
