import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { W, worktreeError } from './errors.ts';
import { git } from './git.ts';

/** A repository as the worker names it: its canonical path and a key usable as a folder name. */
export interface Repo {
  /** The main worktree (or the bare repository), symlinks resolved. */
  path: string;
  /** The shared git directory (`.git` of the main worktree). */
  commonDir: string;
  /** `<folder name>-<8 hex of the path>`: the worktrees of this repo live under `<root>/<key>/`. */
  key: string;
}

/** Refuse what can never be a path we act on: relative paths, NUL bytes, option-looking strings. */
export function checkPathInput(field: string, path: string): string {
  if (path.includes('\0')) throw worktreeError(W.PathRefused, `${field} contains a NUL byte`);
  if (!isAbsolute(path)) throw worktreeError(W.PathRefused, `${field} must be an absolute path (got ${JSON.stringify(path)})`);
  return resolve(path);
}

/** The realpath of an existing path, or a W102/W201 error naming it. */
export function realPath(field: string, path: string): string {
  try {
    return realpathSync(path);
  } catch {
    throw worktreeError(W.NotARepository, `${field} ${path} does not exist`);
  }
}

/** Resolve `repo_path` to its repository: any folder of a clone or a linked worktree names the clone. */
export async function resolveRepo(input: string, timeoutMs: number): Promise<Repo> {
  const path = realPath('repo_path', checkPathInput('repo_path', input));
  if (!statSync(path).isDirectory()) throw worktreeError(W.NotARepository, `repo_path ${path} is not a directory`);
  const res = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: path, timeoutMs, allowFail: true });
  if (res.code !== 0) throw worktreeError(W.NotARepository, `repo_path ${path} is not a git repository`);
  const commonDir = realpathSync(res.stdout.trim());
  // a non-bare repository's common dir is <main worktree>/.git; a bare one is the repository itself
  const repoPath = basename(commonDir) === '.git' ? dirname(commonDir) : commonDir;
  const hash = createHash('sha256').update(commonDir).digest('hex').slice(0, 8);
  const folder =
    basename(repoPath)
      .replace(/\.git$/, '')
      .replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
  return { path: repoPath, commonDir, key: `${folder}-${hash}` };
}

/** True when `child` is `parent` or inside it (both absolute, normalised). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/** The folder of a managed worktree: `<root>/<repo key>/<worktree id>`, refused if it leaves the root. */
export function worktreeDir(root: string, repoKey: string, worktreeId: string): string {
  const dir = join(root, repoKey, worktreeId);
  if (!isInside(root, dir) || dir === root) throw worktreeError(W.PathRefused, `worktree folder ${dir} is outside the root ${root}`);
  return dir;
}

/**
 * Check that a managed worktree's recorded folder is still where the worker put it: under the
 * root it was created in, and not swapped for a symlink that points elsewhere.
 */
export function confined(root: string, dir: string): boolean {
  if (!isInside(root, dir) || dir === root) return false;
  if (!existsSync(dir)) return true; // gone: the caller reports it missing, nothing is touched outside
  try {
    const realRoot = realpathSync(root);
    return isInside(realRoot, realpathSync(dir));
  } catch {
    return false;
  }
}

/** The git directory of a linked worktree (`<common>/worktrees/<name>`), read from its `.git` file. */
export function worktreeGitDir(dir: string): string | undefined {
  try {
    const text = readFileSync(join(dir, '.git'), 'utf8');
    const match = /^gitdir:\s*(.+)$/m.exec(text);
    if (!match) return undefined;
    const gitDir = match[1]!.trim();
    return isAbsolute(gitDir) ? gitDir : resolve(dir, gitDir);
  } catch {
    return undefined;
  }
}

/** Whether a rebase is in progress in a worktree (git keeps its state in rebase-merge/rebase-apply). */
export function rebaseInProgress(dir: string): boolean {
  const gitDir = worktreeGitDir(dir);
  if (!gitDir) return false;
  return existsSync(join(gitDir, 'rebase-merge')) || existsSync(join(gitDir, 'rebase-apply'));
}
