import { AtSign, MessageSquarePlus, MessagesSquare, Paperclip, PlugZap, SearchX, Slash, WifiOff, X } from 'lucide-react';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';

/**
 * The chat's states around the transcript: the outage banner (engine unreachable, a chat worker
 * gone: named, and cleared by itself when it is back), one-line notices (send failures, /compact
 * outcomes) and the welcome of an empty conversation.
 */

export interface ChatNotice {
  tone: 'ok' | 'info' | 'warn' | 'bad';
  text: string;
}

/** The functions the chat cannot work without, and the worker that registers each. */
export const REQUIRED_FUNCTIONS = [
  { id: 'harness::send', worker: 'the turn loop (harness)' },
  { id: 'session::messages', worker: 'the session store (session-manager)' },
  { id: 'router::models::list', worker: 'the model router (llm-router)' },
] as const;

export function ChatBanner({
  online,
  missing,
  error,
}: {
  online: boolean;
  missing: ReadonlyArray<{ id: string; worker: string }>;
  error?: unknown;
}) {
  if (!online) {
    return (
      <div
        role="alert"
        data-testid="chat-outage"
        data-reason="engine"
        className="flex items-start gap-2 border-b border-bad/30 bg-bad-soft px-4 py-2 text-[13px] text-bad"
      >
        <WifiOff size={14} className="mt-0.5 shrink-0" />
        <span>
          The engine is unreachable. What is shown is the last known state, read-only; the chat reconnects by itself and reads the
          conversation again.
        </span>
      </div>
    );
  }
  if (missing.length) {
    return (
      <div
        role="alert"
        data-testid="chat-outage"
        data-reason="harness"
        className="flex items-start gap-2 border-b border-warn/30 bg-warn-soft px-4 py-2 text-[13px] text-warn"
      >
        <PlugZap size={14} className="mt-0.5 shrink-0" />
        <span>
          Not connected: {missing.map((m) => `${m.worker} (${m.id})`).join(', ')}. Messages cannot be sent until it is back; the chat picks
          up by itself when it is.
        </span>
      </div>
    );
  }
  if (error) {
    return (
      <div
        role="alert"
        data-testid="chat-outage"
        data-reason="load"
        className="border-b border-bad/30 bg-bad-soft px-4 py-2 text-[13px] text-bad"
      >
        This conversation could not be read: {(error as Error).message ?? String(error)}
      </div>
    );
  }
  return null;
}

const TONES: Record<ChatNotice['tone'], string> = {
  ok: 'border-ok/30 bg-ok-soft text-ok',
  info: 'border-info/30 bg-info-soft text-info',
  warn: 'border-warn/30 bg-warn-soft text-warn',
  bad: 'border-bad/30 bg-bad-soft text-bad',
};

export function NoticeLine({ notice, onClose }: { notice: ChatNotice; onClose: () => void }) {
  return (
    <div
      role={notice.tone === 'bad' ? 'alert' : 'status'}
      data-testid="chat-notice"
      data-tone={notice.tone}
      className={cn('flex items-start gap-2 rounded-lg border px-3 py-2 text-[12.5px]', TONES[notice.tone])}
    >
      <span className="min-w-0 flex-1 break-words">{notice.text}</span>
      <button type="button" aria-label="Dismiss" onClick={onClose} className="cursor-pointer opacity-70 hover:opacity-100">
        <X size={13} />
      </button>
    </div>
  );
}

export function ChatWelcome({
  hasModels,
  offline,
  notice,
  onCloseNotice,
}: {
  hasModels: boolean;
  offline: boolean;
  notice?: ChatNotice;
  onCloseNotice: () => void;
}) {
  const tips = [
    { icon: AtSign, text: 'Type @ to mention a function the model may call' },
    { icon: Slash, text: '/compact summarises a long conversation' },
    { icon: Paperclip, text: 'Attach files, or drop them on the composer' },
  ];
  return (
    <div className="flex min-h-0 flex-1 flex-col items-center justify-center overflow-y-auto px-6 py-10" data-testid="chat-empty">
      <div className="flex size-12 items-center justify-center rounded-2xl border border-line bg-surface text-accent shadow-card">
        <MessagesSquare size={22} />
      </div>
      <h2 className="mt-4 text-lg font-semibold text-fg">What should the engine do?</h2>
      <p className="mt-1 max-w-md text-center text-[13px] leading-relaxed text-muted">
        {offline
          ? 'The model catalogue is unreachable; the picker shows the usual models of three providers.'
          : hasModels
            ? 'Ask about your functions, plan a change, or let the agent call functions for you — every call waits for your approval unless allowed.'
            : 'No model has a credential yet. Open the model picker below and configure a provider to start.'}
      </p>
      <ul className="mt-5 grid gap-2 sm:grid-cols-3">
        {tips.map((t) => (
          <li
            key={t.text}
            className="flex max-w-56 items-start gap-2 rounded-lg border border-line bg-surface px-3 py-2 text-xs text-muted"
          >
            <t.icon size={13} className="mt-0.5 shrink-0 text-accent" />
            {t.text}
          </li>
        ))}
      </ul>
      {notice ? (
        <div className="mt-5 w-full max-w-xl">
          <NoticeLine notice={notice} onClose={onCloseNotice} />
        </div>
      ) : null}
    </div>
  );
}

/** `#/chat/<id>` for a session the store does not know (a mistyped link, another engine's, or deleted). */
export function ConversationNotFound({ sessionId, onNew }: { sessionId: string; onNew: () => void }) {
  return (
    <div className="flex min-h-0 flex-1 flex-col items-center justify-center overflow-y-auto px-6 py-10" data-testid="chat-not-found">
      <div className="flex size-12 items-center justify-center rounded-2xl border border-line bg-surface text-muted shadow-card">
        <SearchX size={22} />
      </div>
      <h2 className="mt-4 text-lg font-semibold text-fg">Conversation not found</h2>
      <p className="mt-1 max-w-md text-center text-[13px] leading-relaxed text-muted">
        The session store has no session{' '}
        <code className="rounded bg-surface-2 px-1 font-mono text-[12px] break-all text-fg" data-testid="not-found-id">
          {sessionId}
        </code>
        : it was deleted, or the link comes from another engine.
      </p>
      <Button className="mt-5" size="sm" variant="secondary" icon={MessageSquarePlus} onClick={onNew} data-testid="not-found-new-chat">
        New chat
      </Button>
    </div>
  );
}
