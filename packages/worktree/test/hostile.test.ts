import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configure, failure, type Rig, recordEvents, startRig, waitFor } from './helpers.ts';

// Issue 24 items 6–8, found by a hostile model driving the chat: a land's test command that
// reads the worker's secrets, a repository whose own git configuration makes the worker run
// commands, and a worker without a git identity that left every land half-rebased.

// what the worker is started with: secrets a test command must never see, and one harmless variable
const SECRETS = {
  OPENAI_API_KEY: 'sk-openai-secret',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  GITHUB_TOKEN: 'ghp-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  DB_PASSWORD: 'db-secret',
  NODE_AUTH_TOKEN: 'npm-secret',
  SSH_AUTH_SOCK: '/tmp/agent-secret.sock',
};

let rig: Rig;
let landed: { events: any[] };
let blocked: { events: any[] };
beforeAll(async () => {
  rig = await startRig({ workerEnv: { ...SECRETS, HARMLESS_FLAG: 'on' } });
  landed = await recordEvents(rig.client, 'worktree::landed');
  blocked = await recordEvents(rig.client, 'worktree::land-blocked');
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });
const outcomeOf = (worktreeId: string, landedAfter = landed.events.length, blockedAfter = blocked.events.length) =>
  waitFor(
    () =>
      landed.events.slice(landedAfter).find((e) => e.worktree_id === worktreeId) ??
      blocked.events.slice(blockedAfter).find((e) => e.worktree_id === worktreeId),
    30_000,
  );

/** Land and wait for its outcome (landed or blocked event). */
async function land(payload: Record<string, unknown>) {
  const [l, b] = [landed.events.length, blocked.events.length];
  await call('worktree::land', { target_branch: 'main', ...payload });
  return outcomeOf(payload.worktree_id as string, l, b);
}

async function worktreeWith(repoPath: string, files: Record<string, string>) {
  const wt = await call('worktree::create', { repo_path: repoPath });
  return { ...wt, head: rig.repos.commit(wt.path, files, 'feature') };
}

/** Variable names of an `env` dump. */
const names = (dump: string) => new Set(dump.split('\n').map((line) => line.split('=')[0]));

describe("a land's test command (item 6)", () => {
  it("a caller's test_cmd is refused by default; the configured command runs without the worker's secrets", async () => {
    const { repos } = rig;
    const dump = join(repos.dir, 'env-configured.txt');
    const wt = await worktreeWith(repos.repo, { 'six.txt': 'six\n' });
    const refused = await failure(
      call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', test_cmd: `env > ${dump}` }),
    );
    expect(refused.code).toBe('W500');
    expect(refused.message).toContain('gates.allow_caller_test_cmd');
    expect(refused.message).toContain('test_commands');
    expect(existsSync(dump)).toBe(false);
    expect((await call('worktree::get', { worktree_id: wt.worktree_id })).lifecycle).toBe('active');

    // the operator's command for this repository; OPENAI_* asked for, but a credential never passes
    await configure(rig.client, { test_commands: { [repos.repo]: `env > ${dump}` }, test_env: ['HARMLESS_*', 'OPENAI_*'] });
    expect(await land({ worktree_id: wt.worktree_id })).toMatchObject({ merged_sha: repos.head(repos.repo, 'main') });
    const env = readFileSync(dump, 'utf8');
    const seen = names(env);
    for (const name of [...Object.keys(SECRETS), 'ENG_URL', 'ENG_WORKER_CONFIG', 'GIT_CONFIG_GLOBAL'])
      expect(seen, name).not.toContain(name);
    for (const value of Object.values(SECRETS)) expect(env).not.toContain(value);
    expect(env).toContain(`ENG_WORKTREE_ID=${wt.worktree_id}`);
    expect(env).toContain('HARMLESS_FLAG=on');
    expect(seen).toContain('PATH');
    expect(seen).toContain('HOME');
  });

  it('an operator may let callers pick it (gates.allow_caller_test_cmd); it is scrubbed the same way', async () => {
    const { repos } = rig;
    const dump = join(repos.dir, 'env-caller.txt');
    await configure(rig.client, { test_commands: {}, gates: { allow_caller_test_cmd: true } });
    const wt = await worktreeWith(repos.repo, { 'six-b.txt': 'six\n' });
    expect(await land({ worktree_id: wt.worktree_id, test_cmd: `env > ${dump}` })).toHaveProperty('merged_sha');
    const env = readFileSync(dump, 'utf8');
    for (const value of Object.values(SECRETS)) expect(env).not.toContain(value);
    expect(names(env)).not.toContain('OPENAI_API_KEY');
    expect(env).toContain(`ENG_WORKTREE_PATH=${wt.path}`);

    // a caller's command queued while allowed does not run once the gate closes
    const release = join(repos.dir, 'release-first');
    const ran = join(repos.dir, 'second-ran');
    const first = await worktreeWith(repos.repo, { 'first.txt': '1\n' });
    const second = await worktreeWith(repos.repo, { 'second.txt': '2\n' });
    await call('worktree::land', {
      worktree_id: first.worktree_id,
      target_branch: 'main',
      test_cmd: `while [ ! -e ${release} ]; do sleep 0.05; done`,
    });
    const b = blocked.events.length;
    await call('worktree::land', { worktree_id: second.worktree_id, target_branch: 'main', test_cmd: `touch ${ran}` });
    await configure(rig.client, { gates: { allow_caller_test_cmd: false } });
    writeFileSync(release, '');
    const outcome = await outcomeOf(second.worktree_id, landed.events.length, b);
    expect(outcome).toMatchObject({ reason: 'test_failed', code: 'W500' });
    expect(outcome.message).toContain('gates.allow_caller_test_cmd');
    expect(existsSync(ran)).toBe(false);
  });
});

describe("a repository's own git configuration (item 7)", () => {
  let server: Server | undefined;
  afterAll(() => server?.close());

  it('runs no filter, fsmonitor, hook, driver, signing program, ssh command, proxy, upload-pack or credential helper', async () => {
    const { repos } = rig;
    const marks = join(repos.dir, 'marks');
    const bin = join(repos.dir, 'hostile-bin');
    const hooks = join(repos.dir, 'hostile-hooks');
    for (const dir of [marks, bin, hooks]) mkdirSync(dir, { recursive: true });
    // every hostile command leaves a marker named after itself, unless the test itself runs git (WT_TEST_SIDE)
    const mark = (name: string) => `[ -n "$WT_TEST_SIDE" ] || touch ${join(marks, name)}`;
    const script = (name: string, rest = 'exit 0', dir = bin) => {
      const file = join(dir, name);
      writeFileSync(file, `#!/bin/sh\n${mark(name)}\n${rest}\n`);
      chmodSync(file, 0o755);
      return file;
    };
    // a 401 for every request: git asks its credential helpers
    server = createServer((_req, res) => res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' }).end());
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;

    const hostile = join(repos.dir, 'hostile');
    repos.git(repos.dir, 'clone', '--quiet', repos.origin, hostile);
    const side = (cwd: string, ...args: string[]) =>
      // the test's own git: no signing, and no long-running filter (it cannot skip itself like the scripts do)
      execFileSync(
        'git',
        ['-c', 'commit.gpgSign=false', '-c', 'filter.evilproc.process=', '-c', 'filter.evilproc.required=false', ...args],
        {
          cwd,
          env: { ...process.env, ...repos.env, WT_TEST_SIDE: '1' },
          encoding: 'utf8',
        },
      ).trim();
    const commit = (cwd: string, file: string, text: string, message: string) => {
      writeFileSync(join(cwd, file), text);
      side(cwd, 'add', file);
      side(cwd, 'commit', '--quiet', '-m', message);
      return side(cwd, 'rev-parse', 'HEAD');
    };

    writeFileSync(join(hostile, '.git/info/attributes'), '*.txt filter=evil diff=evil merge=evil\n*.md filter=evilproc\n');
    for (const hook of [
      'post-checkout',
      'pre-rebase',
      'post-rewrite',
      'reference-transaction',
      'pre-commit',
      'post-commit',
      'post-merge',
    ]) {
      writeFileSync(join(hooks, hook), `#!/bin/sh\n${mark(`hook-${hook}`)}\n`, { mode: 0o755 });
      writeFileSync(join(hostile, '.git/hooks', hook), `#!/bin/sh\n${mark(`git-dir-hook-${hook}`)}\n`, { mode: 0o755 });
    }
    const settings: Array<[string, string]> = [
      ['core.fsmonitor', script('fsmonitor', 'exit 1')],
      ['core.hooksPath', hooks],
      ['filter.evil.smudge', `${mark('smudge')}; cat`],
      ['include.path', join(repos.dir, 'hostile-include')], // filter.evil.clean, see below
      ['filter.evil.required', 'true'],
      ['filter.evilproc.process', script('process', 'exit 1')],
      ['filter.evilproc.required', 'true'],
      ['merge.evil.driver', `${mark('merge-driver')}; false`],
      ['diff.evil.textconv', `${mark('textconv')}; cat`],
      ['diff.evil.command', mark('diff-command')],
      ['diff.external', mark('diff-external')],
      ['commit.gpgSign', 'true'],
      ['gpg.program', script('gpg', 'exit 1')],
      ['log.showSignature', 'true'],
      ['core.sshCommand', script('ssh', 'exit 1')],
      ['core.gitProxy', script('git-proxy', 'exit 1')],
      ['core.askPass', script('askpass', 'exit 1')],
      ['credential.helper', `!${mark('credential-helper')}; true`],
      ['remote.sshy.url', 'ssh://127.0.0.1:1/x.git'],
      ['remote.gitp.url', 'git://127.0.0.1:1/x.git'],
      ['remote.web.url', `http://127.0.0.1:${port}/x.git`],
      ['remote.up.url', repos.origin],
      ['remote.up.uploadpack', `${mark('upload-pack')}; git-upload-pack`],
    ];
    for (const [key, value] of settings) side(hostile, 'config', key, value);
    side(hostile, 'config', '-f', join(repos.dir, 'hostile-include'), 'filter.evil.clean', `${mark('clean')}; cat`);

    // creating checks out filtered files; a listing with status runs fsmonitor and, for a file
    // whose timestamp changed, the clean filter
    const wt = await call('worktree::create', { repo_path: hostile });
    expect(readFileSync(join(wt.path, 'src/app.txt'), 'utf8')).toBe('line 1\nline 2\nline 3\n');
    utimesSync(join(wt.path, 'src/app.txt'), new Date(), new Date(Date.now() + 5000));
    const listed = await call('worktree::list', { repo_path: hostile, include_status: true });
    expect(listed.worktrees.find((w: any) => w.worktree_id === wt.worktree_id)?.status).toMatchObject({ clean: true });

    // a land that really rebases (and would sign), then moves the hostile checkout (smudging again)
    commit(wt.path, 'src/app.txt', 'line 1\nline 2\nline 3 from the branch\n', 'feature');
    commit(hostile, 'upstream.txt', 'upstream\n', 'upstream');
    expect(await land({ worktree_id: wt.worktree_id })).toHaveProperty('merged_sha');
    expect(readFileSync(join(hostile, 'src/app.txt'), 'utf8')).toBe('line 1\nline 2\nline 3 from the branch\n');

    // both sides change one line: the repository's merge driver does not run, the file conflicts
    const wt2 = await call('worktree::create', { repo_path: hostile });
    commit(wt2.path, 'src/app.txt', 'line 1 from the branch\nline 2\nline 3 from the branch\n', 'branch edit');
    commit(hostile, 'src/app.txt', 'line 1 from main\nline 2\nline 3 from the branch\n', 'main edit');
    expect(await land({ worktree_id: wt2.worktree_id })).toMatchObject({
      reason: 'rebase_conflict',
      code: 'W401',
      conflict_files: ['src/app.txt'],
    });

    // pull requests from remotes whose transport the repository configured
    for (const remote of ['sshy', 'gitp', 'web', 'up']) {
      expect((await failure(call('worktree::create', { repo_path: hostile, pr: 7, remote }))).code, remote).toBe('W204');
    }
    expect(readdirSync(marks)).toEqual([]);
  });

  it("nor one set only in a worktree's own config.worktree", async () => {
    const { repos } = rig;
    const marks = join(repos.dir, 'marks-worktree-config');
    mkdirSync(marks, { recursive: true });
    const repo = join(repos.dir, 'hostile-wt-config');
    repos.git(repos.dir, 'clone', '--quiet', repos.origin, repo);
    // nothing in .git/config names a command: only the worktree's own file will
    repos.git(repo, 'config', 'core.repositoryFormatVersion', '1');
    repos.git(repo, 'config', 'extensions.worktreeConfig', 'true');
    const wt = await call('worktree::create', { repo_path: repo });
    writeFileSync(join(repo, '.git/info/attributes'), '*.txt filter=wtevil\n');
    repos.git(wt.path, 'config', '--worktree', 'filter.wtevil.clean', `touch ${join(marks, 'clean')}; cat`);
    // a changed timestamp makes git status read the file through the clean filter
    utimesSync(join(wt.path, 'src/app.txt'), new Date(), new Date(Date.now() + 5000));
    expect((await call('worktree::get', { worktree_id: wt.worktree_id })).status).toMatchObject({ clean: true });
    expect(readdirSync(marks)).toEqual([]);
  });
});

describe('a worker without a git identity (item 8)', () => {
  it('blocks the land as git_identity_missing with the worktree left as it was; a configured committer lands it', async () => {
    const { repos } = rig;
    const home = mkdtempSync(join(repos.dir, 'empty-home-'));
    const globalConfig = join(home, '.gitconfig');
    // no guessing from the host name either: the check must not depend on how this machine is named
    writeFileSync(globalConfig, '[user]\n\tuseConfigOnly = true\n');
    const unset = {
      GIT_AUTHOR_NAME: undefined,
      GIT_AUTHOR_EMAIL: undefined,
      GIT_COMMITTER_NAME: undefined,
      GIT_COMMITTER_EMAIL: undefined,
      EMAIL: undefined,
    };
    await rig.restartWorker({ ...unset, HOME: home, GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1' });
    try {
      const wt = await worktreeWith(repos.repo, { 'eight.txt': 'eight\n' });
      const mainBefore = repos.commit(repos.repo, { 'eight-upstream.txt': 'u\n' }, 'upstream for eight');
      const outcome = await land({ worktree_id: wt.worktree_id });
      expect(outcome).toMatchObject({ reason: 'git_identity_missing', code: 'W406' });
      expect(outcome.message).toContain('user.name');
      expect(outcome.message).toContain('committer');
      expect(repos.head(repos.repo, 'main')).toBe(mainBefore);
      // no rebase left behind: the branch is where it was, nothing staged or conflicted
      const info = await call('worktree::get', { worktree_id: wt.worktree_id });
      expect(info).toMatchObject({ lifecycle: 'land-blocked', land: { reason: 'git_identity_missing' } });
      expect(info.status).toMatchObject({ in_rebase: false, clean: true, head_sha: wt.head });

      await configure(rig.client, { committer: { name: 'Land Bot', email: 'land-bot@example.test' } });
      expect(await land({ worktree_id: wt.worktree_id })).toMatchObject({ merged_sha: repos.head(repos.repo, 'main') });
      expect(repos.git(repos.repo, 'log', '-1', '--format=%cn <%ce> / %an', 'main')).toBe('Land Bot <land-bot@example.test> / Test Author');
    } finally {
      await rig.restartWorker();
    }
  });
});
