import { W, worktreeError } from './errors.ts';
import { git } from './git.ts';

// Branch and revision names reach git only after these checks: a name that starts with `-` is
// refused outright (it would read as an option, e.g. `--upload-pack=…`), a branch name must pass
// `git check-ref-format` as refs/heads/<name>, and revisions go after `--end-of-options`.

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export function isSha(value: string): boolean {
  return SHA.test(value);
}

function refuseOptionLike(field: string, value: string): void {
  if (value.startsWith('-')) throw worktreeError(W.InvalidRef, `${field} ${JSON.stringify(value)} must not start with "-"`);
  if (/[\0\n\r]/.test(value)) throw worktreeError(W.InvalidRef, `${field} contains a control character`);
}

/** Validate a branch name with git's own rules; returns it unchanged. */
export async function checkBranchName(field: string, name: string, cwd: string, timeoutMs: number): Promise<string> {
  refuseOptionLike(field, name);
  if (name.startsWith('refs/'))
    throw worktreeError(W.InvalidRef, `${field} ${JSON.stringify(name)}: give the short branch name, not a ref`);
  const res = await git(['check-ref-format', `refs/heads/${name}`], { cwd, timeoutMs, allowFail: true });
  if (res.code !== 0 || name === 'HEAD' || name.includes('@{')) {
    throw worktreeError(W.InvalidRef, `${field} ${JSON.stringify(name)} is not a valid branch name`);
  }
  return name;
}

/** The commit a revision names, or W202 (W101 for an option-like string). */
export async function resolveCommit(field: string, rev: string, cwd: string, timeoutMs: number): Promise<string> {
  refuseOptionLike(field, rev);
  const res = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], { cwd, timeoutMs, allowFail: true });
  const sha = res.stdout.trim();
  if (res.code !== 0 || !isSha(sha)) throw worktreeError(W.RefNotFound, `${field} ${JSON.stringify(rev)} does not name a commit in ${cwd}`);
  return sha;
}

/** The commit of refs/heads/<branch>, or undefined when the branch does not exist. */
export async function branchSha(branch: string, cwd: string, timeoutMs: number): Promise<string | undefined> {
  const res = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], {
    cwd,
    timeoutMs,
    allowFail: true,
  });
  const sha = res.stdout.trim();
  return res.code === 0 && isSha(sha) ? sha : undefined;
}

/** The short branch HEAD points at in `cwd`, or undefined when detached. */
export async function currentBranch(cwd: string, timeoutMs: number): Promise<string | undefined> {
  const res = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd, timeoutMs, allowFail: true });
  return res.code === 0 && res.stdout.trim() ? res.stdout.trim() : undefined;
}
