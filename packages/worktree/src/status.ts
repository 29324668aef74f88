import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { W, worktreeError } from './errors.ts';
import { git, gitOut } from './git.ts';
import { integrationReason } from './integration.ts';
import { rebaseInProgress } from './paths.ts';
import { branchSha, isSha } from './refs.ts';
import type { IntegrationReason, WorktreeRecord, WorktreeStatus } from './types.ts';

/** What one listing resolves once per repository: base ref tips and a fingerprint of the remote refs. */
export interface RepoSnapshot {
  tips: Map<string, string | undefined>;
  remotes: string;
}

interface RefFacts {
  ahead: number;
  behind: number;
  diffstat: string;
  integrated?: IntegrationReason;
}

const CACHE_LIMIT = 5000;

/**
 * WorktreeStatus (console-worker.md §4.1). The working-tree part comes from one
 * `git status --porcelain=v2 --branch` per worktree; everything derived from commits alone
 * (ahead/behind, integration, committed diffstat, unpushed) is a pure function of the commit ids
 * involved, so it is cached by them — a listing of many unchanged worktrees costs one git call each.
 */
export class StatusReader {
  private readonly refFacts = new Map<string, Promise<RefFacts>>();
  private readonly unpushedCounts = new Map<string, Promise<number>>();

  constructor(private readonly timeoutMs: () => number) {}

  async snapshot(repoPath: string, baseRefs: Iterable<string>): Promise<RepoSnapshot> {
    const opts = { cwd: repoPath, timeoutMs: this.timeoutMs() };
    const refs = [...new Set(baseRefs)];
    const tips = new Map<string, string | undefined>();
    await Promise.all(
      refs.map(async (ref) => {
        if (isSha(ref)) return tips.set(ref, ref);
        const res = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { ...opts, allowFail: true });
        tips.set(ref, res.code === 0 ? res.stdout.trim() : undefined);
      }),
    );
    const remoteRefs = await gitOut(['for-each-ref', '--format=%(objectname)', 'refs/remotes'], opts);
    return { tips, remotes: createHash('sha1').update(remoteRefs).digest('hex') };
  }

  async status(record: WorktreeRecord, snapshot: RepoSnapshot): Promise<WorktreeStatus> {
    if (!existsSync(record.path)) throw worktreeError(W.PathMissing, `the folder of ${record.worktree_id} (${record.path}) is gone`);
    const timeoutMs = this.timeoutMs();
    const opts = { cwd: record.path, timeoutMs };
    // GIT_OPTIONAL_LOCKS=0: a status read never takes index.lock (a land or the agent may be writing)
    const out = await gitOut(['status', '--porcelain=v2', '--branch', '--untracked-files=normal', '--ignore-submodules=dirty'], {
      ...opts,
      env: { GIT_OPTIONAL_LOCKS: '0' },
    });
    const counts = parsePorcelain(out);
    const head = counts.head;
    if (!head) throw worktreeError(W.GitFailed, `git status in ${record.path} reported no HEAD commit`);
    const upstream = snapshot.tips.get(record.base_ref) ?? record.base_sha;
    const inRebase = rebaseInProgress(record.path);
    // mid-rebase HEAD is detached on the new base: the branch's own commits are where its ref still points
    const tip = inRebase ? ((await branchSha(record.branch, record.path, timeoutMs)) ?? head) : head;
    const facts = await this.refFactsOf(record.path, record.base_sha, tip, upstream, timeoutMs);
    const clean = counts.staged + counts.unstaged + counts.untracked + counts.conflicted === 0;
    const diffstat = clean
      ? facts.diffstat
      : await gitOut(['diff', '--shortstat', '--no-ext-diff', '--no-textconv', '--ignore-submodules=dirty', record.base_sha, '--'], opts);
    const unpushed = await this.unpushedOf(record.path, record.base_sha, tip, snapshot.remotes, timeoutMs);
    return {
      clean,
      ahead: facts.ahead,
      behind: facts.behind,
      staged: counts.staged,
      unstaged: counts.unstaged,
      untracked: counts.untracked,
      conflicted: counts.conflicted,
      unpushed,
      in_rebase: inRebase,
      diffstat,
      head_sha: head,
      integrated: facts.integrated !== undefined,
      ...(facts.integrated ? { integration_reason: facts.integrated } : {}),
    };
  }

  private refFactsOf(cwd: string, base: string, head: string, upstream: string, timeoutMs: number): Promise<RefFacts> {
    const key = `${base}:${head}:${upstream}`;
    return this.cached(this.refFacts, key, async () => {
      const opts = { cwd, timeoutMs };
      const [behind, ahead] = (await gitOut(['rev-list', '--left-right', '--count', `${upstream}...${head}`], opts))
        .split(/\s+/)
        .map(Number);
      const diffstat = await gitOut(['diff', '--shortstat', '--no-ext-diff', '--no-textconv', base, head, '--'], opts);
      const integrated = await integrationReason(cwd, base, head, upstream, timeoutMs);
      return { ahead: ahead ?? 0, behind: behind ?? 0, diffstat, integrated };
    });
  }

  /** Commits of the branch since its base that no remote-tracking ref contains. */
  private unpushedOf(cwd: string, base: string, head: string, remotes: string, timeoutMs: number): Promise<number> {
    return this.cached(this.unpushedCounts, `${base}:${head}:${remotes}`, async () =>
      Number(await gitOut(['rev-list', '--count', head, '--not', base, '--remotes'], { cwd, timeoutMs })),
    );
  }

  private cached<T>(map: Map<string, Promise<T>>, key: string, compute: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit) return hit;
    const value = compute();
    map.set(key, value);
    value.catch(() => map.delete(key)); // a failure (timeout) is not remembered
    if (map.size > CACHE_LIMIT) map.delete(map.keys().next().value as string);
    return value;
  }
}

interface PorcelainCounts {
  head?: string;
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
}

/** Count `git status --porcelain=v2 --branch` entries: `1`/`2` changed (XY), `u` unmerged, `?` untracked. */
export function parsePorcelain(text: string): PorcelainCounts {
  const counts: PorcelainCounts = { staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  for (const line of text.split('\n')) {
    if (line.startsWith('# branch.oid ')) {
      const oid = line.slice('# branch.oid '.length).trim();
      if (isSha(oid)) counts.head = oid;
    } else if (line.startsWith('1 ') || line.startsWith('2 ')) {
      const xy = line.slice(2, 4);
      if (xy[0] !== '.') counts.staged++;
      if (xy[1] !== '.') counts.unstaged++;
    } else if (line.startsWith('u ')) counts.conflicted++;
    else if (line.startsWith('? ')) counts.untracked++;
  }
  return counts;
}
