import { git, gitOut } from './git.ts';
import type { IntegrationReason } from './types.ts';

// Whether a worktree's branch already made it into its upstream (console-worker.md §4.1
// `integrated`): fast-forward, merge, rebase or squash landings all count. Checked from the
// cheapest test to the most expensive; the first that holds is the reason.

const MAX_UPSTREAM_COMMITS = 500;

/**
 * @param base the commit the worktree was created from (base_sha)
 * @param head the worktree's HEAD
 * @param upstream the current tip of its base ref
 */
export async function integrationReason(
  cwd: string,
  base: string,
  head: string,
  upstream: string,
  timeoutMs: number,
): Promise<IntegrationReason | undefined> {
  // a branch with nothing of its own is not "integrated": there is nothing to integrate
  if (head === base) return undefined;
  if (head === upstream) return 'same_commit';
  const opts = { cwd, timeoutMs };
  if ((await git(['merge-base', '--is-ancestor', head, upstream], { ...opts, allowFail: true })).code === 0) return 'ancestor';
  if ((await git(['diff', '--quiet', base, head, '--'], { ...opts, allowFail: true })).code === 0) return 'no_added_changes';
  const [headTree, upstreamTree] = (await gitOut(['rev-parse', `${head}^{tree}`, `${upstream}^{tree}`], opts)).split('\n');
  if (headTree && headTree === upstreamTree) return 'trees_match';
  // merging the branch into the upstream would change nothing: its changes are all there already
  const merge = await git(['merge-tree', '--write-tree', '--no-messages', upstream, head], { ...opts, allowFail: true });
  if (merge.code === 0 && merge.stdout.split('\n')[0]?.trim() === upstreamTree) return 'merge_adds_nothing';
  if (await patchIdsLanded(cwd, head, upstream, timeoutMs)) return 'patch_id_match';
  return undefined;
}

/** Rebase-landed (every commit has an equivalent upstream) or squash-landed (the whole diff is one upstream commit). */
async function patchIdsLanded(cwd: string, head: string, upstream: string, timeoutMs: number): Promise<boolean> {
  const opts = { cwd, timeoutMs };
  const cherry = (await gitOut(['cherry', upstream, head], opts)).split('\n').filter(Boolean);
  if (cherry.length > 0 && cherry.every((line) => line.startsWith('-'))) return true;
  const mergeBase = (await git(['merge-base', upstream, head], { ...opts, allowFail: true })).stdout.trim();
  if (!mergeBase) return false;
  const squashDiff = (await git(['diff', '--no-color', '--no-ext-diff', '--no-textconv', mergeBase, head, '--'], opts)).stdout;
  if (!squashDiff.trim()) return false;
  const squashId = (await git(['patch-id', '--stable'], { ...opts, input: squashDiff })).stdout.trim().split(/\s+/)[0];
  if (!squashId) return false;
  const log = (
    await git(
      [
        'log',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '--no-merges',
        '-p',
        `--max-count=${MAX_UPSTREAM_COMMITS}`,
        `${mergeBase}..${upstream}`,
        '--',
      ],
      opts,
    )
  ).stdout;
  if (!log.trim()) return false;
  const ids = (await git(['patch-id', '--stable'], { ...opts, input: log })).stdout;
  return ids.split('\n').some((line) => line.split(/\s+/)[0] === squashId);
}
