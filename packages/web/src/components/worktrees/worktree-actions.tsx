import { Link } from '@tanstack/react-router';
import { Lock, PlaneLanding, Trash2, Unlock } from 'lucide-react';
import { useId, useState } from 'react';
import {
  consoleSessionId,
  useClaimWorktree,
  useLandWorktree,
  useReleaseWorktree,
  useRemoveWorktree,
  useWorktreeConfig,
  type WorktreeInfo,
} from '../../api/worktrees.ts';
import { Button } from '../ui/button.tsx';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput, Toggle } from '../ui/inputs.tsx';
import { formatTestCommand, isCallerTestCmdRefusal, landTestGate, withoutCode } from './land-test-gate.ts';

/**
 * Claim, release, land (target; a test command of the caller's only while the worker's
 * gates.allow_caller_test_cmd is on) and remove (with confirmation) of one worktree.
 */
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
      {error ? <ErrorNote title="The worktree worker refused" error={withoutCode(error)} /> : null}
      {landing ? <LandDialog wt={wt} onClose={() => setLanding(false)} /> : null}
      {removing ? <RemoveDialog wt={wt} onClose={() => setRemoving(false)} /> : null}
    </div>
  );
}

function LandDialog({ wt, onClose }: { wt: WorktreeInfo; onClose: () => void }) {
  const land = useLandWorktree();
  const config = useWorktreeConfig();
  const [target, setTarget] = useState(wt.base_ref.startsWith('refs/') || /^[0-9a-f]{40}$/.test(wt.base_ref) ? 'main' : wt.base_ref);
  const [testCmd, setTestCmd] = useState('');
  const [keep, setKeep] = useState(false);
  const targetId = useId();
  const testId = useId();
  const gate = landTestGate(config.data ?? null, wt.repo_path);
  // the field only when the worker takes a caller's command, or when its settings cannot be read (then it says what to expect)
  const offerField = !config.isPending && (!gate.known || gate.allowCaller);
  const command = offerField ? testCmd.trim() : '';
  const submit = () =>
    land.mutate(
      { worktree_id: wt.worktree_id, target_branch: target.trim(), ...(command ? { test_cmd: command } : {}), keep },
      { onSuccess: onClose },
    );
  const refused = isCallerTestCmdRefusal(land.error);
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
          Rebases the branch onto the target, runs the test command in the worktree if there is one, then moves the target forward in one
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
        <div
          className="space-y-1"
          data-testid="worktree-land-test-gate"
          data-known={String(gate.known)}
          data-allow-caller={String(gate.known && gate.allowCaller)}
        >
          {config.isPending ? (
            <p className="text-xs text-muted">Reading the worker's test settings…</p>
          ) : offerField ? (
            <>
              <label htmlFor={testId} className="block text-xs font-medium text-muted">
                Test command (optional, runs in the worktree)
              </label>
              <TextInput
                id={testId}
                value={testCmd}
                onChange={(e) => setTestCmd(e.target.value)}
                aria-label="Test command"
                aria-describedby={`${testId}-hint`}
                placeholder={gate.configured ? formatTestCommand(gate.configured) : 'npm test'}
                className="font-mono"
              />
              <p id={`${testId}-hint`} className="text-xs text-muted" data-testid="worktree-land-test-hint">
                {gate.known ? (
                  <>
                    The worker takes a command of yours (<code className="font-mono">gates.allow_caller_test_cmd</code> is on).{' '}
                    {gate.configured ? (
                      <>
                        Left empty, the repository's configured one runs:{' '}
                        <code className="font-mono break-all">{formatTestCommand(gate.configured)}</code>.
                      </>
                    ) : (
                      'Left empty, no tests run: no test_commands entry matches this repository.'
                    )}
                  </>
                ) : (
                  <>
                    The worker's settings could not be read. It refuses a command of yours (W500) unless its operator sets{' '}
                    <code className="font-mono">gates.allow_caller_test_cmd: true</code>; left empty, the repository's configured command (
                    <code className="font-mono">test_commands</code>) runs, if any.
                  </>
                )}
              </p>
            </>
          ) : (
            <>
              <p className="text-xs font-medium text-muted">Test command</p>
              <p className="rounded-lg border border-line bg-surface-2 px-2.5 py-1.5" data-testid="worktree-land-test-configured">
                {gate.configured ? (
                  <>
                    The repository's configured command runs:{' '}
                    <code className="font-mono text-xs break-all">{formatTestCommand(gate.configured)}</code>
                  </>
                ) : (
                  'None: no test_commands entry matches this repository, so the land runs no tests.'
                )}
              </p>
              <p className="text-xs text-muted" data-testid="worktree-land-test-hint">
                A command of your own is not offered: the worker refuses one (W500) unless its operator sets{' '}
                <code className="font-mono">gates.allow_caller_test_cmd: true</code> in the <code className="font-mono">worktree</code>{' '}
                configuration entry (
                <Link to="/config" className="text-accent hover:underline">
                  Config
                </Link>
                ).
              </p>
            </>
          )}
        </div>
        <Toggle checked={keep} onChange={setKeep} label="Keep the worktree after landing" />
        {refused ? (
          <div
            role="alert"
            className="rounded-lg border border-bad/30 bg-bad-soft px-3 py-2 text-[13px] text-bad"
            data-testid="worktree-land-test-refused"
          >
            <p className="font-medium">The worker refused the test command (W500)</p>
            <p className="mt-0.5">
              Only the repository's configured test command (test_commands) runs on a land. A command of your own needs{' '}
              <code className="font-mono text-xs">gates.allow_caller_test_cmd: true</code> in the worker's configuration; land again without
              one.
            </p>
            <p className="mt-1 font-mono text-xs break-words opacity-90">{withoutCode(land.error).message}</p>
          </div>
        ) : land.error ? (
          <ErrorNote title="The land was refused" error={withoutCode(land.error)} />
        ) : null}
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
