import { GitMerge, TriangleAlert } from 'lucide-react';
import type { ReactNode } from 'react';
import type { WorktreeInfo } from '../../api/worktrees.ts';
import { blockedReason } from '../../lib/chat/worktree-notices.ts';
import { formatDateTime, timeAgo } from '../../lib/format.ts';
import { Badge } from '../ui/badge.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { DetailPanel, PanelSection } from '../ui/detail-panel.tsx';
import { WorktreeActions } from './worktree-actions.tsx';
import { INTEGRATION_TEXT, LIFECYCLE_VISUAL } from './worktree-graph.ts';

/** The per-worktree panel (seed 2.9): branch, base, dev port, clean/ahead/behind, diffstat, integrated marker, actions. */
export function WorktreeDetail({ wt, onClose }: { wt: WorktreeInfo; onClose: () => void }) {
  const s = wt.status;
  const lifecycle = LIFECYCLE_VISUAL[wt.lifecycle];
  return (
    <DetailPanel
      testId="worktree-detail"
      onClose={onClose}
      title={
        <>
          <span className="truncate font-mono text-sm font-semibold text-fg" data-testid="worktree-detail-branch">
            {wt.branch}
          </span>
          <Badge tone={lifecycle.tone}>
            <span data-testid="worktree-detail-lifecycle">{lifecycle.label}</span>
          </Badge>
        </>
      }
      subtitle={
        <span className="flex items-center gap-1 font-mono text-xs">
          {wt.worktree_id}
          <CopyButton text={wt.worktree_id} label="Copy the worktree id" />
        </span>
      }
    >
      <PanelSection title="Actions">
        <WorktreeActions wt={wt} />
      </PanelSection>

      <PanelSection title="Status">
        {s ? (
          <div className="space-y-3" data-testid="worktree-status">
            <div className="flex flex-wrap items-center gap-1.5">
              <Badge tone={s.clean ? 'ok' : 'warn'}>
                <span data-testid="worktree-clean">{s.clean ? 'clean' : 'uncommitted changes'}</span>
              </Badge>
              <Badge tone={s.ahead ? 'accent' : 'neutral'} mono>
                <span data-testid="worktree-ahead">+{s.ahead} ahead</span>
              </Badge>
              <Badge tone={s.behind ? 'warn' : 'neutral'} mono>
                <span data-testid="worktree-behind">−{s.behind} behind</span>
              </Badge>
              {s.in_rebase ? <Badge tone="bad">rebase in progress</Badge> : null}
            </div>
            {s.integrated ? (
              <p className="flex items-center gap-1.5 text-[13px] text-ok" data-testid="worktree-integrated">
                <GitMerge size={14} /> merged upstream ({s.integration_reason ?? 'integrated'}
                {s.integration_reason && INTEGRATION_TEXT[s.integration_reason] ? `: ${INTEGRATION_TEXT[s.integration_reason]}` : ''})
              </p>
            ) : null}
            <Facts>
              <Fact label="Diffstat">
                <span data-testid="worktree-diffstat">{s.diffstat || 'no changes since the base'}</span>
              </Fact>
              <Fact label="Changes">{`${s.staged} staged · ${s.unstaged} modified · ${s.untracked} untracked · ${s.conflicted} conflicted`}</Fact>
              <Fact label="Unpushed">{`${s.unpushed} commit${s.unpushed === 1 ? '' : 's'} on no remote`}</Fact>
              <Fact label="HEAD">
                <Mono text={s.head_sha} />
              </Fact>
            </Facts>
          </div>
        ) : (
          <p className="flex items-center gap-1.5 text-[13px] text-warn">
            <TriangleAlert size={14} /> {wt.status_error ?? 'status unavailable'}
          </p>
        )}
      </PanelSection>

      <PanelSection title="Worktree">
        <Facts>
          <Fact label="Branch">
            <Mono text={wt.branch} />
          </Fact>
          <Fact label="Base">
            <span data-testid="worktree-base">{`${wt.base_ref} @ ${wt.base_sha.slice(0, 10)}`}</span>
          </Fact>
          <Fact label="Dev port">
            <span data-testid="worktree-dev-port">{`${wt.dev_port} (advisory)`}</span>
          </Fact>
          <Fact label="Session">{wt.session_id ? <Mono text={wt.session_id} /> : <span className="text-faint">not claimed</span>}</Fact>
          <Fact label="Path">
            <Mono text={wt.path} />
          </Fact>
          <Fact label="Repository">
            <Mono text={wt.repo_path} />
          </Fact>
          {wt.pr !== undefined ? <Fact label="Pull request">{`#${wt.pr}`}</Fact> : null}
          <Fact label="Created">{`${formatDateTime(wt.created_at)} (${timeAgo(wt.created_at)})`}</Fact>
        </Facts>
      </PanelSection>

      {wt.land ? (
        <PanelSection title="Last land">
          <div className="space-y-2 text-[13px]" data-testid="worktree-land">
            <Facts>
              <Fact label="Target">
                <Mono text={wt.land.target_branch} />
              </Fact>
              <Fact label="State">{wt.land.state}</Fact>
              {wt.land.merged_sha ? (
                <Fact label="Merged">
                  <Mono text={wt.land.merged_sha} />
                </Fact>
              ) : null}
              {wt.land.reason ? (
                <Fact label="Blocked">
                  <span data-testid="worktree-land-reason" data-reason={wt.land.reason} title={wt.land.reason}>
                    {`${blockedReason({ ...wt.land })}${wt.land.code ? ` (${wt.land.code})` : ''}`}
                  </span>
                </Fact>
              ) : null}
            </Facts>
            {wt.land.message ? (
              <p className="rounded-lg bg-surface-2 px-2.5 py-1.5 font-mono text-xs break-words text-muted">{wt.land.message}</p>
            ) : null}
            {wt.land.conflict_files?.length ? (
              <ul className="font-mono text-xs text-bad" data-testid="worktree-conflicts">
                {wt.land.conflict_files.map((f) => (
                  <li key={f}>{f}</li>
                ))}
              </ul>
            ) : null}
          </div>
        </PanelSection>
      ) : null}
    </DetailPanel>
  );
}

function Mono({ text }: { text: string }) {
  return (
    <span className="flex min-w-0 items-center gap-1">
      <span className="min-w-0 truncate font-mono text-xs" title={text}>
        {text}
      </span>
      <CopyButton text={text} label={`Copy ${text}`} />
    </span>
  );
}

function Facts({ children }: { children: ReactNode }) {
  return <dl className="grid grid-cols-[7rem_minmax(0,1fr)] gap-x-3 gap-y-1.5 text-[13px]">{children}</dl>;
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-faint">{label}</dt>
      <dd className="min-w-0 text-fg">{children}</dd>
    </>
  );
}
