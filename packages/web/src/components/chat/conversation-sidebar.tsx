import { Link } from '@tanstack/react-router';
import { Check, MessageSquarePlus, PanelLeftClose, PanelLeftOpen, Pencil, Trash2, X } from 'lucide-react';
import { memo, useEffect, useRef, useState } from 'react';
import { originOf, type SessionMeta, useDeleteConversation, useRenameConversation } from '../../api/chat-sessions.ts';
import { timeAgo } from '../../lib/format.ts';
import { Badge, StatusDot, type Tone } from '../ui/badge.tsx';
import { Button, IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { Spinner } from '../ui/spinner.tsx';

/**
 * The conversation sidebar (seed 2.9): new chat, the conversations ordered by last update with
 * their live status (working / idle / error), inline rename, delete with confirmation. Collapsible.
 * The conversations are the engine's sessions (issue 25 item 2); each row is a link to
 * `#/chat/<session_id>`, and one the console did not make carries its origin ("mcp", "api",
 * "sub-agent", "other").
 */

const STATUS: Record<string, { tone: Tone; label: string }> = {
  working: { tone: 'accent', label: 'working' },
  idle: { tone: 'neutral', label: 'idle' },
  done: { tone: 'ok', label: 'done' },
  error: { tone: 'bad', label: 'error' },
};

function Row({
  meta,
  active,
  onOpen,
  onDeleted,
}: {
  meta: SessionMeta;
  active: boolean;
  onOpen: () => void;
  onDeleted: (id: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(meta.title);
  const [confirm, setConfirm] = useState(false);
  const rename = useRenameConversation();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);
  const remove = useDeleteConversation();
  const status = STATUS[meta.status] ?? { tone: 'neutral' as Tone, label: meta.status };
  const origin = originOf(meta);
  const save = () => {
    const t = title.trim();
    if (t && t !== meta.title) rename.mutate({ sessionId: meta.session_id, title: t });
    setEditing(false);
  };
  return (
    <li
      data-testid="conversation"
      data-session-id={meta.session_id}
      data-status={meta.status}
      data-active={String(active)}
      data-origin={origin ?? 'console'}
      className={cn('group rounded-lg', active ? 'bg-accent-soft' : 'hover:bg-surface-2')}
    >
      {editing ? (
        <form
          className="flex items-center gap-1 p-1"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <input
            ref={input}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.stopPropagation();
                setTitle(meta.title);
                setEditing(false);
              }
            }}
            aria-label="Conversation title"
            data-testid="rename-input"
            className="h-7 min-w-0 flex-1 rounded-md border border-accent bg-surface px-2 text-[13px] text-fg outline-none"
          />
          <IconButton icon={Check} label="Save title" size="xs" type="submit" />
          <IconButton icon={X} label="Cancel rename" size="xs" onClick={() => setEditing(false)} />
        </form>
      ) : (
        <div className="flex items-center gap-1 pr-1">
          <Link
            to="/chat/$sessionId"
            params={{ sessionId: meta.session_id }}
            onClick={onOpen}
            onDoubleClick={() => {
              setTitle(meta.title);
              setEditing(true);
            }}
            aria-current={active ? 'page' : undefined}
            data-testid="conversation-link"
            className="flex min-w-0 flex-1 cursor-pointer items-center gap-2 rounded-lg px-2.5 py-2 text-left outline-none focus-visible:ring-2 focus-visible:ring-accent/40"
          >
            {meta.status === 'working' ? <Spinner size={10} className="text-accent" /> : <StatusDot tone={status.tone} />}
            <span className="min-w-0 flex-1">
              <span
                className={cn('block truncate text-[13px]', active ? 'font-medium text-fg' : 'text-fg')}
                data-testid="conversation-title"
              >
                {meta.title || 'New chat'}
              </span>
              <span className="flex min-w-0 items-center gap-1.5 text-[11px] text-faint">
                <span className="min-w-0 truncate">
                  <span data-testid="conversation-status">{status.label}</span> · {timeAgo(meta.updated_at)}
                </span>
                {origin ? (
                  <Badge
                    tone="info"
                    mono
                    className="h-4 max-w-24 px-1 text-[10px]"
                    title={`Made outside this console (${origin}), from its session metadata`}
                  >
                    <span className="truncate" data-testid="conversation-origin">
                      {origin}
                    </span>
                  </Badge>
                ) : null}
              </span>
            </span>
          </Link>
          <div className="flex opacity-0 group-focus-within:opacity-100 group-hover:opacity-100">
            <IconButton
              icon={Pencil}
              label="Rename"
              size="xs"
              onClick={() => {
                setTitle(meta.title);
                setEditing(true);
              }}
            />
            <IconButton icon={Trash2} label="Delete" size="xs" onClick={() => setConfirm(true)} />
          </div>
        </div>
      )}
      <ConfirmDialog
        open={confirm}
        title="Delete this conversation?"
        confirmLabel="Delete"
        busy={remove.isPending}
        error={remove.error}
        onClose={() => setConfirm(false)}
        onConfirm={() =>
          remove.mutate(meta.session_id, {
            onSuccess: () => {
              setConfirm(false);
              onDeleted(meta.session_id);
            },
          })
        }
      >
        <p>
          “{meta.title || 'New chat'}” and its transcript are removed from the session store (session::delete). Calls waiting for approval
          in it are cancelled.
        </p>
      </ConfirmDialog>
    </li>
  );
}

export const ConversationSidebar = memo(function ConversationSidebar({
  conversations,
  loading,
  active,
  collapsed,
  onToggle,
  onOpen,
  onNew,
  onDeleted,
}: {
  conversations: SessionMeta[];
  loading: boolean;
  active: string | undefined;
  collapsed: boolean;
  onToggle: () => void;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDeleted: (id: string) => void;
}) {
  if (collapsed) {
    return (
      <div
        className="flex flex-col items-center gap-1 border-r border-line bg-surface/60 p-1.5"
        data-testid="chat-sidebar"
        data-collapsed="true"
      >
        <IconButton icon={PanelLeftOpen} label="Show conversations" onClick={onToggle} />
        <IconButton icon={MessageSquarePlus} label="New chat (n)" onClick={onNew} />
      </div>
    );
  }
  return (
    // below 768 px the list lies over the conversation (a 16rem column would leave it ~130 px at 390)
    <aside
      className="flex w-64 shrink-0 flex-col border-r border-line bg-surface/60 max-md:absolute max-md:inset-y-0 max-md:left-0 max-md:z-20 max-md:bg-surface max-md:shadow-xl"
      data-testid="chat-sidebar"
      data-collapsed="false"
    >
      <div className="flex items-center gap-1 p-2">
        <Button size="sm" variant="secondary" icon={MessageSquarePlus} onClick={onNew} className="flex-1" data-testid="new-chat">
          New chat
        </Button>
        <IconButton icon={PanelLeftClose} label="Hide conversations" onClick={onToggle} />
      </div>
      <ul className="min-h-0 flex-1 space-y-0.5 overflow-y-auto px-2 pb-2" aria-label="Conversations">
        {loading && conversations.length === 0 ? (
          <li className="flex items-center gap-2 px-2 py-3 text-xs text-muted">
            <Spinner size={12} /> Loading conversations…
          </li>
        ) : conversations.length === 0 ? (
          <li className="px-2 py-3 text-xs text-muted">No conversations yet.</li>
        ) : (
          conversations.map((c) => (
            <Row key={c.session_id} meta={c} active={c.session_id === active} onOpen={() => onOpen(c.session_id)} onDeleted={onDeleted} />
          ))
        )}
      </ul>
    </aside>
  );
});
