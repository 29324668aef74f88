import { Lock, PlaneLanding, Trash2, Unlock } from 'lucide-react';
import { useId, useState } from 'react';
import {
  consoleSessionId,
  useClaimWorktree,
  useLandWorktree,
  useReleaseWorktree,
  useRemoveWorktree,
  type WorktreeInfo,
} from '../../api/worktrees.ts';
import { Button } from '../ui/button.tsx';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput, Toggle } from '../ui/inputs.tsx';

/** Claim, release, land (target, test command) and remove (with confirmation) of one worktree. */
export function WorktreeActions({ wt }: { wt: WorktreeInfo }) {
  const claim = useClaimWorktree();
  const release = useReleaseWorktree();
  const [landing, setLanding] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [session, setSession] = useState(consoleSessionId);
  const busy = wt.lifecycle === 'landing';
  const error = claim.error ?? release.error;
  return (
    <div className="space-y-2.5">
      <div className="flex flex-wrap items-center gap-2">
        {wt.session_id ? (
          <Button
            size="sm"
            icon={Unlock}
            loading={release.isPending}
            onClick={() => release.mutate({ worktree_id: wt.worktree_id, session_id: wt.session_id as string })}
            data-testid="worktree-release"
            title={`Release the claim of session ${wt.session_id}`}
          >
            Release
          </Button>
        ) : (
          <>
            <TextInput
              aria-label="Session id to claim for"
              value={session}
              onChange={(e) => setSession(e.target.value)}
              className="w-40 font-mono text-xs"
            />
            <Button
              size="sm"
              icon={Lock}
              disabled={busy || !session.trim()}
              loading={claim.isPending}
              onClick={() => claim.mutate({ worktree_id: wt.worktree_id, session_id: session.trim() })}
              data-testid="worktree-claim"
            >
              Claim
            </Button>
          </>
        )}
        <Button
          size="sm"
          variant="primary"
          icon={PlaneLanding}
          disabled={busy}
          onClick={() => setLanding(true)}
          data-testid="worktree-land-open"
        >
          Land…
        </Button>
        <Button
          size="sm"
          variant="ghost"
          icon={Trash2}
          disabled={busy}
          onClick={() => setRemoving(true)}
          data-testid="worktree-remove-open"
        >
          Remove…
        </Button>
      </div>
      {busy ? (
        <p className="text-xs text-muted">A land is in progress; the worktree cannot be claimed, landed or removed until it finishes.</p>
      ) : null}
      {error ? <ErrorNote title="The worktree worker refused" error={error} /> : null}
      {landing ? <LandDialog wt={wt} onClose={() => setLanding(false)} /> : null}
      {removing ? <RemoveDialog wt={wt} onClose={() => setRemoving(false)} /> : null}
    </div>
  );
}

function LandDialog({ wt, onClose }: { wt: WorktreeInfo; onClose: () => void }) {
  const land = useLandWorktree();
  const [target, setTarget] = useState(wt.base_ref.startsWith('refs/') || /^[0-9a-f]{40}$/.test(wt.base_ref) ? 'main' : wt.base_ref);
  const [testCmd, setTestCmd] = useState('');
  const [keep, setKeep] = useState(false);
  const targetId = useId();
  const testId = useId();
  const submit = () =>
    land.mutate(
      { worktree_id: wt.worktree_id, target_branch: target.trim(), ...(testCmd.trim() ? { test_cmd: testCmd.trim() } : {}), keep },
      { onSuccess: onClose },
    );
  return (
    <Dialog open onClose={onClose} title={`Land ${wt.branch}`}>
      <form
        className="space-y-3 px-4 py-4 text-[13px]"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <p className="text-muted">
          Rebases the branch onto the target, runs the test command in the worktree if you give one, then moves the target forward in one
          step. The outcome arrives as a landed or land-blocked event.
        </p>
        <div className="space-y-1">
          <label htmlFor={targetId} className="block text-xs font-medium text-muted">
            Target branch
          </label>
          <TextInput
            id={targetId}
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            aria-label="Target branch"
            className="font-mono"
          />
        </div>
        <div className="space-y-1">
          <label htmlFor={testId} className="block text-xs font-medium text-muted">
            Test command (optional, runs in the worktree)
          </label>
          <TextInput
            id={testId}
            value={testCmd}
            onChange={(e) => setTestCmd(e.target.value)}
            aria-label="Test command"
            placeholder="npm test"
            className="font-mono"
          />
        </div>
        <Toggle checked={keep} onChange={setKeep} label="Keep the worktree after landing" />
        {land.error ? <ErrorNote title="The land was refused" error={land.error} /> : null}
        <div className="flex justify-end gap-2 border-t border-line pt-3">
          <Button size="sm" variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button
            size="sm"
            variant="primary"
            type="submit"
            loading={land.isPending}
            disabled={!target.trim()}
            data-testid="worktree-land-submit"
          >
            Land
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function RemoveDialog({ wt, onClose }: { wt: WorktreeInfo; onClose: () => void }) {
  const remove = useRemoveWorktree();
  const [deleteBranch, setDeleteBranch] = useState(true);
  return (
    <ConfirmDialog
      open
      title={`Remove ${wt.branch}?`}
      confirmLabel="Remove"
      busy={remove.isPending}
      error={remove.error}
      onClose={onClose}
      onConfirm={() => remove.mutate({ worktree_id: wt.worktree_id, delete_branch: deleteBranch }, { onSuccess: onClose })}
    >
      <p>
        The folder <code className="font-mono text-xs break-all">{wt.path}</code> goes away. The worker refuses if it has uncommitted work,
        or commits not in {wt.base_ref} when the branch goes too.
      </p>
      <Toggle checked={deleteBranch} onChange={setDeleteBranch} label={`Also delete the branch ${wt.branch}`} />
    </ConfirmDialog>
  );
}
