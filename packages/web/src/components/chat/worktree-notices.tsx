import { GitMerge, OctagonAlert, X } from 'lucide-react';
import { memo } from 'react';
import { dismissWorktreeNotice, useChatWorktreeEvents, useWorktreeNotices } from '../../api/chat-worktrees.ts';
import { formatTime } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';

/** Mounted while the worktree worker is connected: its lifecycle events keep the badge fresh and bring the notices. */
export const ChatWorktreeEvents = memo(function ChatWorktreeEvents() {
  useChatWorktreeEvents();
  return null;
});

/**
 * The notices of the open conversation's worktree (seed 8): landed (target branch and the merged
 * sha) and land blocked (the reason: up to three conflicted files and "and N more", the tests'
 * exit code, …), above the composer until dismissed.
 */
export const WorktreeNoticeList = memo(function WorktreeNoticeList({ sessionId }: { sessionId: string }) {
  const notices = useWorktreeNotices(sessionId);
  if (!notices.length) return null;
  return (
    <div className="mx-auto w-full max-w-3xl space-y-1.5 px-4 pb-2" data-testid="worktree-notices">
      {notices.map((n) => {
        const landed = n.kind === 'landed';
        const Icon = landed ? GitMerge : OctagonAlert;
        return (
          <div
            key={n.id}
            role={landed ? 'status' : 'alert'}
            data-testid="worktree-notice"
            data-kind={n.kind}
            data-worktree-id={n.worktreeId}
            className={cn(
              'flex items-start gap-2 rounded-lg border px-3 py-2 text-[12.5px]',
              landed ? 'border-ok/30 bg-ok-soft text-ok' : 'border-bad/30 bg-bad-soft text-bad',
            )}
          >
            <Icon size={14} className="mt-0.5 shrink-0" />
            <div className="min-w-0 flex-1">
              <p className="font-medium break-words" data-testid="worktree-notice-title">
                {n.title}
              </p>
              {n.detail ? <p className="mt-0.5 font-mono text-xs break-words opacity-90">{n.detail}</p> : null}
            </div>
            <span className="shrink-0 text-[11px] opacity-80">{formatTime(n.at)}</span>
            <button
              type="button"
              onClick={() => dismissWorktreeNotice(sessionId, n.id)}
              className="shrink-0 cursor-pointer rounded p-0.5 opacity-70 hover:opacity-100"
              aria-label="Dismiss"
            >
              <X size={13} />
            </button>
          </div>
        );
      })}
    </div>
  );
});
