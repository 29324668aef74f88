import { AlertTriangle, Check, ChevronDown, Folder, FolderOpen, GitBranch, Plus } from 'lucide-react';
import { memo, useEffect, useId, useMemo, useRef, useState } from 'react';
import { createWorktreeFor, pickFolder, pickWorktree, pointConversation } from '../../api/chat-worktrees.ts';
import { usePresence } from '../../api/presence.ts';
import { useWorktrees, type WorktreeInfo } from '../../api/worktrees.ts';
import { useChatPrefs } from '../../lib/chat/prefs.ts';
import { shortWorktreeId } from '../../lib/chat/worktree-notices.ts';
import { StatusDot } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { TextInput } from '../ui/inputs.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { folderName, LIFECYCLE_VISUAL } from '../worktrees/worktree-graph.ts';

/**
 * The composer's working-directory picker (seed 2.9 "Picker tab", "Working-dir badge"). A
 * conversation's working directory goes with every turn as `options.metadata.fs_scope.root`. Tab
 * "Folder": any path. Tab "Worktrees" (only while the worktree worker is connected): the managed
 * worktrees — picking one validates it and claims it for the conversation's session; one with a
 * land in progress is listed but cannot be picked; a new one can be created, claimed at once.
 * Pointing the conversation elsewhere releases the claim (best effort). The trigger is the badge:
 * branch, short id, dirty `*`, ahead `+n` and a lifecycle dot, the raw path as its tooltip.
 */
export interface WorkingDirSlotProps {
  sessionId: string | undefined;
  /** The conversation's working directory (local storage, per conversation). */
  value: string | undefined;
  disabled: boolean;
}

export const WorkingDirSlot = memo(function WorkingDirSlot({ sessionId, value, disabled }: WorkingDirSlotProps) {
  const presence = usePresence();
  return presence.worktrees ? (
    <WithWorktrees sessionId={sessionId} value={value} disabled={disabled} />
  ) : (
    <Picker sessionId={sessionId} value={value} disabled={disabled} worktrees={undefined} />
  );
});

/**
 * The worktree list (the Worktrees page's query): re-read on every lifecycle event and when the
 * picker opens; polled every 15 s only while this conversation is in a worktree (its dirty and
 * ahead markers change without an event).
 */
function WithWorktrees(props: WorkingDirSlotProps) {
  const prefs = useChatPrefs();
  const inWorktree = !!props.sessionId && !!prefs.worktrees[props.sessionId];
  const list = useWorktrees(!inWorktree);
  return <Picker {...props} worktrees={list.data ?? []} loading={list.isPending} refresh={() => void list.refetch()} />;
}

function Picker({
  sessionId,
  value,
  disabled,
  worktrees,
  loading = false,
  refresh,
}: WorkingDirSlotProps & { worktrees: WorktreeInfo[] | undefined; loading?: boolean; refresh?: () => void }) {
  const prefs = useChatPrefs();
  const claimed = sessionId ? prefs.worktrees[sessionId] : undefined;
  const [open, setOpen] = useState(false);
  const [tab, setTab] = useState<'folder' | 'worktrees'>(worktrees ? 'worktrees' : 'folder');
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const box = useRef<HTMLDivElement>(null);
  const present = worktrees !== undefined;
  const current = useMemo(
    () => worktrees?.find((w) => (claimed ? w.worktree_id === claimed : value !== undefined && w.path === value)),
    [worktrees, claimed, value],
  );

  // opening the picker reads the list again (dirty and ahead change without a lifecycle event)
  const refreshLatest = useRef(refresh);
  refreshLatest.current = refresh;
  useEffect(() => {
    if (open) refreshLatest.current?.();
  }, [open]);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        setOpen(false);
      }
    };
    window.addEventListener('mousedown', onDown);
    window.addEventListener('keydown', onKey, true);
    return () => {
      window.removeEventListener('mousedown', onDown);
      window.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
  useEffect(() => {
    if (!present && tab === 'worktrees') setTab('folder');
  }, [present, tab]);

  const run = async (key: string, action: () => Promise<unknown>) => {
    setBusy(key);
    setError(undefined);
    try {
      await action();
      setOpen(false);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    // in a narrow composer the menu opens from the composer's edge, not the button's (it would leave the screen)
    <div className="relative min-w-0 shrink-[3] @max-lg:static" ref={box}>
      <button
        type="button"
        disabled={disabled || !sessionId}
        onClick={() => {
          setError(undefined);
          setOpen((v) => !v);
        }}
        aria-haspopup="dialog"
        aria-expanded={open}
        data-testid="working-dir"
        data-root={value ?? ''}
        data-worktree-id={current?.worktree_id ?? claimed ?? ''}
        title={
          !sessionId
            ? 'Start a conversation to give it a working directory'
            : value
              ? `Working directory: ${value}`
              : 'Working directory of this conversation (sent as fs_scope.root)'
        }
        className="inline-flex h-7 max-w-[min(18rem,100%)] min-w-0 cursor-pointer items-center gap-1.5 rounded-md border border-line bg-surface px-2 text-[12.5px] text-fg hover:bg-surface-2 disabled:cursor-not-allowed disabled:opacity-50"
      >
        {current ? (
          <WorktreeBadge wt={current} />
        ) : value && claimed ? (
          <span className="inline-flex min-w-0 items-center gap-1.5 text-warn" data-testid="worktree-badge" data-gone="true">
            <AlertTriangle size={13} />
            <span className="truncate font-mono text-[11.5px]">{shortWorktreeId(claimed)}</span>
            <span className="text-[11px]">{loading ? '…' : 'worktree gone'}</span>
          </span>
        ) : value ? (
          <>
            <Folder size={13} className="shrink-0 text-faint" />
            <span className="min-w-0 truncate font-mono text-[11.5px]">{folderName(value)}</span>
          </>
        ) : (
          <>
            <FolderOpen size={13} className="shrink-0 text-faint" />
            <span className="min-w-0 truncate text-muted">
              Working<span className="@max-md:hidden"> dir</span>
            </span>
          </>
        )}
        <ChevronDown size={13} className="shrink-0 text-faint @max-sm:hidden" />
      </button>
      {open && sessionId ? (
        <div
          role="dialog"
          aria-label="Working directory"
          className="absolute bottom-full left-0 z-30 mb-2 w-96 max-w-full overflow-hidden rounded-lg border border-line bg-surface shadow-pop"
          data-testid="working-dir-menu"
        >
          <div role="tablist" aria-label="Working directory source" className="flex items-center gap-4 border-b border-line px-3">
            {present ? <Tab id="worktrees" label="Worktrees" active={tab} onSelect={setTab} /> : null}
            <Tab id="folder" label="Folder" active={tab} onSelect={setTab} />
          </div>
          {tab === 'worktrees' && worktrees ? (
            <WorktreesTab
              worktrees={worktrees}
              loading={loading}
              sessionId={sessionId}
              current={current?.worktree_id}
              busy={busy}
              onPick={(wt) => void run(wt.worktree_id, () => pickWorktree(sessionId, wt))}
              onCreate={(repo, base) => void run('create', () => createWorktreeFor(sessionId, repo, base))}
            />
          ) : (
            <FolderTab
              value={value}
              busy={busy}
              onUse={(path) => void run('folder', () => pickFolder(sessionId, path, present))}
              onClear={() => void run('clear', () => pointConversation(sessionId, {}))}
            />
          )}
          {error ? (
            <p
              role="alert"
              className="border-t border-bad/30 bg-bad-soft px-3 py-2 text-xs break-words text-bad"
              data-testid="working-dir-error"
            >
              {error}
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function Tab<T extends string>({ id, label, active, onSelect }: { id: T; label: string; active: string; onSelect: (id: T) => void }) {
  return (
    <button
      type="button"
      role="tab"
      aria-selected={active === id}
      onClick={() => onSelect(id)}
      data-testid={`working-dir-tab-${id}`}
      className={cn(
        '-mb-px cursor-pointer border-b-2 py-2 text-[12.5px] font-medium',
        active === id ? 'border-accent text-fg' : 'border-transparent text-muted hover:text-fg',
      )}
    >
      {label}
    </button>
  );
}

/** Branch, short id, dirty `*`, ahead `+n` and the lifecycle dot of a managed worktree; the raw path as the tooltip. */
export function WorktreeBadge({ wt }: { wt: WorktreeInfo }) {
  const visual = LIFECYCLE_VISUAL[wt.lifecycle] ?? LIFECYCLE_VISUAL.active;
  const dirty = wt.status ? !wt.status.clean : false;
  const ahead = wt.status?.ahead ?? 0;
  return (
    <span
      className="inline-flex min-w-0 items-center gap-1.5"
      title={`${wt.path}\n${wt.branch} · ${shortWorktreeId(wt.worktree_id)} · ${visual.label}${wt.status?.diffstat ? ` · ${wt.status.diffstat}` : ''}`}
      data-testid="worktree-badge"
      data-lifecycle={wt.lifecycle}
    >
      <StatusDot tone={visual.tone} pulse={wt.lifecycle === 'landing'} />
      <GitBranch size={13} className="shrink-0 text-faint @max-sm:hidden" />
      <span className="max-w-56 min-w-0 truncate font-mono text-[11.5px]" data-testid="worktree-badge-branch">
        {wt.branch}
      </span>
      <span className="shrink-0 font-mono text-[10.5px] text-faint @max-sm:hidden" data-testid="worktree-badge-id">
        {shortWorktreeId(wt.worktree_id)}
      </span>
      {dirty ? (
        <span
          className="shrink-0 font-mono text-[12px] font-semibold text-warn"
          title="uncommitted changes"
          data-testid="worktree-badge-dirty"
        >
          *
        </span>
      ) : null}
      {ahead > 0 ? (
        <span
          className="shrink-0 font-mono text-[11px] text-accent"
          title={`${ahead} commit(s) ahead of ${wt.base_ref}`}
          data-testid="worktree-badge-ahead"
        >
          +{ahead}
        </span>
      ) : null}
    </span>
  );
}

function WorktreesTab({
  worktrees,
  loading,
  sessionId,
  current,
  busy,
  onPick,
  onCreate,
}: {
  worktrees: WorktreeInfo[];
  loading: boolean;
  sessionId: string;
  current: string | undefined;
  busy: string | undefined;
  onPick: (wt: WorktreeInfo) => void;
  onCreate: (repoPath: string, baseRef: string) => void;
}) {
  const repos = useMemo(() => [...new Set(worktrees.map((w) => w.repo_path))], [worktrees]);
  const [repo, setRepo] = useState('');
  const [base, setBase] = useState('');
  const repoId = useId();
  const baseId = useId();
  const repoValue = repo || repos[0] || '';
  return (
    <div>
      <div className="max-h-72 overflow-y-auto py-1" data-testid="worktree-options">
        {loading ? (
          <p className="flex items-center gap-2 px-3 py-2 text-xs text-muted">
            <Spinner size={12} /> Reading worktree::list…
          </p>
        ) : worktrees.length === 0 ? (
          <p className="px-3 py-2 text-xs text-muted">No managed worktrees yet: create one below.</p>
        ) : (
          repos.map((r) => (
            <div key={r}>
              <div className="truncate px-3 pt-2 pb-1 font-mono text-[10.5px] text-faint" title={r}>
                {r}
              </div>
              {worktrees
                .filter((w) => w.repo_path === r)
                .map((wt) => {
                  // a land in progress cannot be retargeted; a missing folder cannot be worked in
                  const blocked =
                    wt.lifecycle === 'landing' ? 'a land is in progress' : wt.lifecycle === 'orphaned' ? 'its folder is gone' : undefined;
                  const other = wt.session_id && wt.session_id !== sessionId ? wt.session_id : undefined;
                  const selected = wt.worktree_id === current;
                  return (
                    <button
                      type="button"
                      key={wt.worktree_id}
                      disabled={!!blocked || busy !== undefined}
                      aria-disabled={!!blocked}
                      onClick={() => onPick(wt)}
                      data-testid="worktree-option"
                      data-worktree-id={wt.worktree_id}
                      data-lifecycle={wt.lifecycle}
                      title={blocked ? `${wt.path}: cannot be picked, ${blocked}` : wt.path}
                      className={cn(
                        'flex w-full cursor-pointer items-center gap-2 px-3 py-1.5 text-left text-[12.5px] hover:bg-surface-2 disabled:cursor-not-allowed',
                        blocked && 'opacity-60',
                        selected && 'bg-accent-soft',
                      )}
                    >
                      <span className="flex w-3.5 shrink-0 justify-center">
                        {busy === wt.worktree_id ? <Spinner size={11} /> : selected ? <Check size={13} className="text-accent" /> : null}
                      </span>
                      <span className="min-w-0 flex-1">
                        <WorktreeBadge wt={wt} />
                        {blocked || other ? (
                          <span
                            className={cn('block text-[11px]', blocked ? 'text-warn' : 'text-faint')}
                            data-testid="worktree-option-note"
                          >
                            {blocked ? `cannot be picked: ${blocked}` : `claimed by ${other}`}
                          </span>
                        ) : null}
                      </span>
                    </button>
                  );
                })}
            </div>
          ))
        )}
      </div>
      <form
        className="space-y-1.5 border-t border-line px-3 py-2.5"
        onSubmit={(e) => {
          e.preventDefault();
          if (repoValue.trim()) onCreate(repoValue, base);
        }}
      >
        <p className="text-[11px] font-semibold tracking-wider text-faint uppercase">New worktree for this conversation</p>
        <div className="flex gap-1.5">
          <label htmlFor={repoId} className="sr-only">
            Repository
          </label>
          <TextInput
            id={repoId}
            list={`${repoId}-repos`}
            value={repoValue}
            onChange={(e) => setRepo(e.target.value)}
            placeholder="/path/to/repository"
            className="h-7 min-w-0 flex-1 font-mono text-xs"
          />
          <datalist id={`${repoId}-repos`}>
            {repos.map((r) => (
              <option key={r} value={r} />
            ))}
          </datalist>
          <label htmlFor={baseId} className="sr-only">
            Base ref
          </label>
          <TextInput
            id={baseId}
            value={base}
            onChange={(e) => setBase(e.target.value)}
            placeholder="HEAD"
            title="Base ref (HEAD when empty)"
            className="h-7 w-20 shrink-0 font-mono text-xs"
          />
          <Button
            size="xs"
            type="submit"
            icon={Plus}
            loading={busy === 'create'}
            disabled={!repoValue.trim() || busy !== undefined}
            data-testid="worktree-create"
          >
            Create
          </Button>
        </div>
      </form>
    </div>
  );
}

function FolderTab({
  value,
  busy,
  onUse,
  onClear,
}: {
  value: string | undefined;
  busy: string | undefined;
  onUse: (path: string) => void;
  onClear: () => void;
}) {
  const [path, setPath] = useState(value ?? '');
  const id = useId();
  return (
    <form
      className="space-y-2 px-3 py-2.5"
      onSubmit={(e) => {
        e.preventDefault();
        onUse(path);
      }}
    >
      <label htmlFor={id} className="block text-xs text-muted">
        Folder the agent works in (absolute path)
      </label>
      <TextInput
        id={id}
        value={path}
        onChange={(e) => setPath(e.target.value)}
        placeholder="/path/to/project"
        className="h-7 font-mono text-xs"
        data-testid="working-dir-input"
      />
      <div className="flex items-center gap-1.5">
        <Button
          size="xs"
          variant="primary"
          type="submit"
          loading={busy === 'folder'}
          disabled={busy !== undefined}
          data-testid="working-dir-use"
        >
          Use
        </Button>
        <Button
          size="xs"
          variant="ghost"
          onClick={onClear}
          loading={busy === 'clear'}
          disabled={busy !== undefined || !value}
          data-testid="working-dir-clear"
        >
          None
        </Button>
      </div>
    </form>
  );
}
