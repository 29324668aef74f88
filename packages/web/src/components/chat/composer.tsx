import { ArrowUp, Bot, ListChecks, type LucideIcon, MessageCircleQuestion, Paperclip, Square } from 'lucide-react';
import { memo, type ReactNode, useRef, useState } from 'react';
import { type Attachment, readAttachment } from '../../lib/chat/attachments.ts';
import { type ChatMode, MODES } from '../../lib/chat/prefs.ts';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { AttachmentTray } from './attachment-tray.tsx';
import { commandMatches, SuggestionList, triggerAt, useMentionMatches } from './suggestions.tsx';

/**
 * The composer (seed 2.9): modes plan / ask / agent, the model picker (passed in), @-mentions,
 * the /compact command, attachments (picker, drag and drop, paste) with previews, Send (Enter) and
 * Stop while a turn runs. `workingDir` is the slot for the working-directory picker and badge
 * (the worktrees surface fills it).
 */

const MODE_HELP: Record<ChatMode, string> = {
  ask: 'Ask: answers only, no function calls',
  plan: 'Plan: read-only investigation, then a plan',
  agent: 'Agent: calls engine functions (each one approved unless allowed)',
};
const MODE_ICON: Record<ChatMode, LucideIcon> = { ask: MessageCircleQuestion, plan: ListChecks, agent: Bot };

/*
 * The control row stays one row at every width (issue 25 item 6): the composer is a size
 * container, and as it narrows the controls give up their words, not their place — Attach and
 * Stop below 36rem, the modes and Send below 32rem (icons with their names as tooltips and for
 * screen readers); the model picker and the working directory shrink and truncate (their full
 * text in the tooltip) and drop their secondary parts below 24rem.
 */

export const Composer = memo(function Composer({
  mode,
  onMode,
  picker,
  workingDir,
  running,
  canSend,
  disabledReason,
  attachments,
  onAttachments,
  visionNote,
  onSend,
  onCommand,
  onStop,
  textareaRef,
}: {
  mode: ChatMode;
  onMode: (mode: ChatMode) => void;
  picker: ReactNode;
  workingDir?: ReactNode;
  running: boolean;
  canSend: boolean;
  disabledReason?: string;
  attachments: Attachment[];
  onAttachments: (next: Attachment[]) => void;
  visionNote?: string;
  onSend: (text: string) => Promise<boolean> | boolean;
  onCommand: (name: string) => void;
  onStop: () => void;
  textareaRef?: React.RefObject<HTMLTextAreaElement | null>;
}) {
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<number | undefined>();
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const ownRef = useRef<HTMLTextAreaElement>(null);
  const area = textareaRef ?? ownRef;

  const rawTrigger = triggerAt(text, caret);
  const trigger = rawTrigger && dismissed !== rawTrigger.start ? rawTrigger : undefined;
  const { matches, loading } = useMentionMatches(trigger);
  const count = trigger?.kind === '@' ? matches.length : trigger ? commandMatches(trigger.query).length : 0;

  const addFiles = async (files: FileList | File[]) => {
    const read = await Promise.all([...files].map(readAttachment));
    onAttachments([...attachments, ...read]);
  };

  const pick = (index: number) => {
    if (!trigger) return;
    if (trigger.kind === '/') {
      const command = commandMatches(trigger.query)[index];
      if (command) {
        setText('');
        onCommand(command.name);
      }
      return;
    }
    const fn = matches[index];
    if (!fn) return;
    const insert = `@${fn.function_id} `;
    const next = text.slice(0, trigger.start) + insert + text.slice(caret);
    setText(next);
    const at = trigger.start + insert.length;
    requestAnimationFrame(() => {
      area.current?.focus();
      area.current?.setSelectionRange(at, at);
      setCaret(at);
    });
  };

  const submit = async () => {
    const trimmed = text.trim();
    const command = /^\/([\w-]+)\s*$/.exec(trimmed)?.[1];
    if (command && commandMatches(command).some((c) => c.name === command)) {
      setText('');
      onCommand(command);
      return;
    }
    if (!canSend || (!trimmed && attachments.length === 0)) return;
    // cleared at once (the message shows optimistically); put back if the send fails
    setText('');
    const sent = await onSend(trimmed);
    if (!sent) setText((current) => current || text);
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (trigger && count > 0) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : count - 1)) % count);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        pick(Math.min(active, count - 1));
        return;
      }
    }
    if (trigger && e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      setDismissed(trigger.start);
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a drop target for files; Attach is the keyboard path
    <div
      className="mx-auto w-full max-w-3xl px-4 pb-4"
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node)) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        if (e.dataTransfer.files.length) void addFiles(e.dataTransfer.files);
      }}
    >
      <div
        className={cn(
          '@container relative rounded-xl border bg-surface shadow-card transition-colors',
          dragging ? 'border-accent ring-2 ring-accent/20' : 'border-line-strong focus-within:border-accent',
        )}
        data-testid="composer"
      >
        {trigger && (trigger.kind === '/' || trigger.query.length > 0 || matches.length > 0) ? (
          <SuggestionList
            trigger={trigger}
            mentions={matches}
            loading={loading}
            active={Math.min(active, Math.max(0, count - 1))}
            onPick={pick}
          />
        ) : null}
        {dragging ? (
          <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center rounded-xl bg-accent-soft/80 text-sm font-medium text-accent">
            Drop files to attach them
          </div>
        ) : null}
        <AttachmentTray
          attachments={attachments}
          onRemove={(id) => onAttachments(attachments.filter((a) => a.id !== id))}
          visionNote={visionNote}
        />
        <textarea
          ref={area}
          value={text}
          rows={Math.min(10, Math.max(2, text.split('\n').length))}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart);
            setActive(0);
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
          onKeyDown={onKeyDown}
          onPaste={(e) => {
            if (e.clipboardData.files.length) {
              e.preventDefault();
              void addFiles(e.clipboardData.files);
            }
          }}
          placeholder={disabledReason ?? 'Message the chat stack — @ to mention a function, / for commands'}
          aria-label="Message"
          data-testid="composer-input"
          className="block w-full resize-none bg-transparent px-3.5 pt-3 pb-1 text-[14px] leading-relaxed text-fg outline-none placeholder:text-faint"
        />
        <div className="flex min-w-0 items-center gap-1.5 px-2 pb-2 @max-sm:gap-1" data-testid="composer-controls">
          <fieldset className="m-0 flex shrink-0 rounded-md border border-line p-0.5" aria-label="Mode">
            {MODES.map((m) => {
              const Icon = MODE_ICON[m];
              return (
                <button
                  key={m}
                  type="button"
                  aria-pressed={mode === m}
                  title={MODE_HELP[m]}
                  data-testid={`mode-${m}`}
                  onClick={() => onMode(m)}
                  className={cn(
                    'inline-flex h-6 cursor-pointer items-center rounded px-1.5 text-xs font-medium capitalize @lg:px-2',
                    mode === m ? 'bg-accent-soft text-accent' : 'text-muted hover:text-fg',
                  )}
                >
                  <Icon size={13} className="@lg:hidden" aria-hidden />
                  <span className="sr-only @lg:not-sr-only">{m}</span>
                </button>
              );
            })}
          </fieldset>
          {picker}
          {workingDir}
          <input
            ref={fileInput}
            type="file"
            multiple
            className="hidden"
            data-testid="attach-input"
            onChange={(e) => {
              if (e.target.files?.length) void addFiles(e.target.files);
              e.target.value = '';
            }}
          />
          <Button
            size="sm"
            variant="ghost"
            icon={Paperclip}
            onClick={() => fileInput.current?.click()}
            title="Attach files (or drop them here)"
            className="@max-xl:w-7 @max-xl:px-0"
            data-testid="attach-button"
          >
            <span className="sr-only @xl:not-sr-only">Attach</span>
          </Button>
          <span className="min-w-0 flex-1" />
          {running ? (
            <Button
              size="sm"
              variant="secondary"
              icon={Square}
              onClick={onStop}
              data-testid="stop-button"
              title="Stop the answer (Esc)"
              className="@max-xl:w-7 @max-xl:px-0"
            >
              <span className="sr-only @xl:not-sr-only">Stop</span>
            </Button>
          ) : null}
          <Button
            size="sm"
            variant="primary"
            icon={ArrowUp}
            disabled={!canSend || (!text.trim() && attachments.length === 0)}
            onClick={() => void submit()}
            data-testid="send-button"
            title={disabledReason ?? 'Send (Enter; Shift+Enter for a new line)'}
            className="@max-lg:w-7 @max-lg:px-0"
          >
            <span className="sr-only @lg:not-sr-only">Send</span>
          </Button>
        </div>
      </div>
    </div>
  );
});
