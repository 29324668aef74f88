import { describe, expect, it } from 'vitest';
import { blockedReason, landNotice, ownerOf, shortWorktreeId } from '../src/lib/chat/worktree-notices.ts';

// The chat's worktree notices and badge (seed 2.9, seed 8, console-worker.md §4.3): the texts of
// worktree::landed / worktree::land-blocked, which conversation an event belongs to, the short id.

describe('worktree notices', () => {
  it('landed: the branch, the target and the merged sha (8 characters)', () => {
    const n = landNotice(
      'landed',
      { worktree_id: 'wt_0123456789ab', branch: 'eng/wt_0123456789ab', target_branch: 'main', merged_sha: 'a'.repeat(40) },
      1000,
    );
    expect(n).toMatchObject({
      kind: 'landed',
      worktreeId: 'wt_0123456789ab',
      title: 'Worktree eng/wt_0123456789ab landed onto main (aaaaaaaa)',
    });
  });

  it('land-blocked: up to three conflicted files and "and N more", the exit code of the tests, the other reasons in words', () => {
    const conflict = { reason: 'rebase_conflict', conflict_files: ['a', 'b', 'c', 'd', 'e'] };
    expect(blockedReason(conflict)).toBe('conflicts in a, b, c and 2 more (the rebase is left in progress to resolve)');
    expect(blockedReason({ reason: 'rebase_conflict', conflict_files: ['only.txt'] })).toBe(
      'conflicts in only.txt (the rebase is left in progress to resolve)',
    );
    expect(blockedReason({ reason: 'test_failed', exit_code: 2 })).toBe('the tests failed (exit 2)');
    expect(blockedReason({ reason: 'dirty' })).toBe('the worktree has uncommitted changes');
    expect(blockedReason({ reason: 'target_moved_exhausted' })).toBe('the target kept moving (retries used up)');
    expect(blockedReason({ reason: 'some_new_reason' })).toBe('some new reason');
    // eng's W406 and a caller's test command the worker refused when the land ran (W500, never run: no exit code)
    expect(blockedReason({ reason: 'git_identity_missing', code: 'W406' })).toBe(
      "git has no identity (user.name / user.email) on the worker's machine: set one there, or the worker's committer setting",
    );
    expect(blockedReason({ reason: 'test_failed', code: 'W500' })).toBe(
      "the caller's test command was refused (the worker's gates.allow_caller_test_cmd is off); land again without one",
    );

    // the branch comes from the list when the payload does not carry it; the W### code leads the detail
    const n = landNotice(
      'land-blocked',
      {
        worktree_id: 'wt_x',
        target_branch: 'main',
        code: 'W410',
        message: 'tests failed with exit code 1',
        reason: 'test_failed',
        exit_code: 1,
        timestamp: 5,
      },
      9,
      'eng/feature',
    );
    expect(n.title).toBe('Land of eng/feature onto main blocked: the tests failed (exit 1)');
    expect(n.detail).toBe('W410 · tests failed with exit code 1');
    // a message that starts with its code is not prefixed twice
    expect(landNotice('land-blocked', { worktree_id: 'wt_x', code: 'W401', message: 'W401: conflicts' }, 9).detail).toBe('W401: conflicts');
    // the same event reported twice (a land resumed after a crash) has the same id
    const again = landNotice('land-blocked', { worktree_id: 'wt_x', target_branch: 'main', reason: 'test_failed', timestamp: 5 }, 99);
    expect(again.id).toBe(n.id);
  });

  it('belongs to the session the event names when it is one of ours, else to the conversation that claimed the worktree', () => {
    const conversations = ['s_1', 's_2'];
    const claims = { s_2: 'wt_b' };
    expect(ownerOf({ session_id: 's_1', worktree_id: 'wt_a' }, conversations, claims)).toBe('s_1');
    expect(ownerOf({ session_id: 'agent-7', worktree_id: 'wt_b' }, conversations, claims)).toBe('s_2');
    expect(ownerOf({ worktree_id: 'wt_b' }, conversations, claims)).toBe('s_2');
    // another session's worktree: nobody here
    expect(ownerOf({ session_id: 'agent-7', worktree_id: 'wt_c' }, conversations, claims)).toBeUndefined();
  });

  it('shows 8 characters of the id, without its wt_ prefix', () => {
    expect(shortWorktreeId('wt_3f2a91c04b7e')).toBe('3f2a91c0');
  });
});
