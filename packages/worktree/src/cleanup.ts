import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from './git.ts';
import { isInside } from './paths.ts';
import type { WorktreeRecord } from './types.ts';

const TRASH = '.trash';

/**
 * Take a managed worktree off disk: unlock it, move its folder into `<root>/.trash` (one rename,
 * so the remove answers at once even for a large tree), let git forget it (`worktree prune`) and
 * delete the folder in the background. Without a usable trash (another filesystem), git removes it.
 */
export async function removeWorktreeFolder(record: WorktreeRecord, timeoutMs: number): Promise<void> {
  const opts = { cwd: record.repo_path, timeoutMs };
  await git(['worktree', 'unlock', '--', record.path], { ...opts, allowFail: true });
  if (existsSync(record.path)) {
    const trashDir = join(record.root, TRASH);
    const target = join(trashDir, `${record.worktree_id}-${Date.now()}`);
    let moved = false;
    if (isInside(record.root, record.path)) {
      try {
        await mkdir(trashDir, { recursive: true });
        await rename(record.path, target);
        moved = true;
      } catch {
        moved = false;
      }
    }
    if (!moved) await git(['worktree', 'remove', '--force', '--force', '--', record.path], opts);
    else void rm(target, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
  await git(['worktree', 'prune'], { ...opts, allowFail: true });
}

/** Delete a branch the worker created (`-D`: the caller decided it may go). Returns whether it is gone. */
export async function deleteBranch(repoPath: string, branch: string, timeoutMs: number): Promise<boolean> {
  const res = await git(['branch', '-D', '--', branch], { cwd: repoPath, timeoutMs, allowFail: true });
  return res.code === 0;
}

/** Empty the trash of a root (folders a killed worker left behind). */
export async function emptyTrash(root: string): Promise<void> {
  const dir = join(root, TRASH);
  if (!existsSync(dir)) return;
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    await rm(join(dir, entry), { recursive: true, force: true }).catch(() => undefined);
  }
}
