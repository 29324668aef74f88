import {
  AlertTriangle,
  Archive,
  Brain,
  Check,
  ChevronRight,
  CircleStop,
  Copy,
  FileText,
  ImageOff,
  KeyRound,
  type LucideIcon,
  Pencil,
  RefreshCw,
  RotateCcw,
  Scissors,
} from 'lucide-react';
import { memo, useEffect, useRef, useState } from 'react';
import { parseAttachedFile } from '../../lib/chat/attachments.ts';
import type { Block } from '../../lib/chat/transcript.ts';
import { formatBytes } from '../../lib/format.ts';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { openProviderSettings } from './model-picker.tsx';
import { Markdown } from './rich-lazy.tsx';
import { useTurnActions, writeClipboard } from './turn-actions.tsx';

/**
 * The transcript's message variants: user bubble (Copy; Edit on the last one), assistant text,
 * thought, compaction marker, stop notice (Retry, and the provider's settings after a 401), and
 * the actions row that ends each answer (Copy, Regenerate on the last one).
 */

function Mentioned({ text }: { text: string }) {
  // @function::ids the composer inserted are shown as chips
  const parts = text.split(/(@[A-Za-z0-9_.-]+(?:::[A-Za-z0-9_.:-]+)+)/g);
  return (
    <>
      {parts.map((part, i) =>
        part.startsWith('@') && part.includes('::') ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts of one immutable string
          <span key={i} className="rounded bg-accent-soft px-1 font-mono text-[12.5px] text-accent" data-testid="mention-chip">
            {part}
          </span>
        ) : (
          part
        ),
      )}
    </>
  );
}

function FileChip({ name, detail, error }: { name: string; detail?: string; error?: string }) {
  return (
    <span
      className={cn(
        'inline-flex max-w-full items-center gap-1.5 rounded-md border px-2 py-1 text-xs',
        error ? 'border-warn/40 bg-warn-soft text-warn' : 'border-line bg-surface text-muted',
      )}
      title={error ?? detail}
      data-testid="message-attachment"
    >
      {error ? <ImageOff size={13} /> : <FileText size={13} />}
      <span className="truncate font-medium text-fg">{name}</span>
      {error ? <span className="truncate">{error}</span> : detail ? <span>{detail}</span> : null}
    </span>
  );
}

const CLAMP = 1200;

/** A long message (a pasted document) shows its beginning until expanded. */
function UserText({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  const long = text.length > CLAMP;
  return (
    <div className="whitespace-pre-wrap break-words">
      <Mentioned text={long && !open ? `${text.slice(0, CLAMP).trimEnd()}…` : text} />
      {long ? (
        <button type="button" onClick={() => setOpen((v) => !v)} className="mt-1 block cursor-pointer text-xs text-accent hover:underline">
          {open ? 'Show less' : `Show all (${text.length.toLocaleString()} characters)`}
        </button>
      ) : null}
    </div>
  );
}

/** The parts of a user message: what was typed, attached files, images. */
function userParts(blocks: Block[]) {
  const texts: string[] = [];
  const files: Array<{ name: string; detail?: string; error?: string }> = [];
  const images: Array<{ mime: string; data: string }> = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      const file = parseAttachedFile(b.text);
      if (file)
        files.push({
          name: file.name,
          detail: file.body !== undefined ? `${file.body.split('\n').length} lines` : undefined,
          error: file.error,
        });
      else texts.push(b.text);
    } else if (b.type === 'image' && b.data) images.push({ mime: b.mime, data: b.data });
    else if (b.type === 'file') files.push({ name: b.name, detail: formatBytes(b.size) });
  }
  return { text: texts.join('\n'), files, images };
}

/** The edited message: the new text first, then what was attached (files, images), unchanged. */
function editedContent(blocks: Block[], text: string): Block[] {
  const attached = blocks.filter(
    (b) => (b.type === 'text' && parseAttachedFile(b.text)) || b.type === 'file' || (b.type === 'image' && b.data),
  );
  return [...(text.trim() ? [{ type: 'text' as const, text: text.trim() }] : []), ...attached];
}

export const UserMessage = memo(function UserMessage({
  entryId,
  blocks,
  queued,
  editable,
}: {
  entryId: string;
  blocks: Block[];
  queued?: boolean;
  editable?: boolean;
}) {
  const { text, files, images } = userParts(blocks);
  const [editing, setEditing] = useState(false);
  const actions = useTurnActions();
  if (editing && editable && actions)
    return <EditMessage entryId={entryId} blocks={blocks} initial={text} onDone={() => setEditing(false)} />;
  return (
    <div className="group flex flex-col items-end" data-testid="user-message" data-entry-id={entryId}>
      <div className="max-w-[85%] space-y-2 rounded-2xl rounded-br-md bg-accent-soft px-3.5 py-2.5 text-[14px] leading-relaxed text-fg">
        {images.length ? (
          <div className="flex flex-wrap gap-2">
            {images.map((img, i) => (
              <img
                // biome-ignore lint/suspicious/noArrayIndexKey: images of one immutable message
                key={i}
                src={`data:${img.mime};base64,${img.data}`}
                alt="attached"
                className="max-h-48 max-w-64 rounded-lg border border-line object-cover"
                data-testid="message-image"
              />
            ))}
          </div>
        ) : null}
        {files.length ? (
          <div className="flex flex-wrap gap-1.5">
            {files.map((f, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: files of one immutable message
              <FileChip key={i} {...f} />
            ))}
          </div>
        ) : null}
        {text ? <UserText text={text} /> : null}
        {queued ? <p className="text-[11px] text-muted">sent while the previous step streamed</p> : null}
      </div>
      <div
        className={cn(
          'mt-1 flex items-center gap-0.5 transition-opacity',
          // the last message's actions stay in view; earlier ones show on hover or focus (always on touch screens)
          !editable && 'opacity-0 group-hover:opacity-100 focus-within:opacity-100 [@media(hover:none)]:opacity-100',
        )}
        data-testid="user-message-actions"
      >
        {text ? <CopyAction text={text} what="message" /> : null}
        {editable && actions ? (
          <ActionButton
            icon={Pencil}
            label="Edit"
            title="Edit this message and send it again (replaces it and the answer)"
            onClick={() => setEditing(true)}
            testId="edit-message"
          />
        ) : null}
      </div>
    </div>
  );
});

/** The last user message edited in place: Send replaces it and what followed (harness::edit); Esc cancels. */
function EditMessage({ entryId, blocks, initial, onDone }: { entryId: string; blocks: Block[]; initial: string; onDone: () => void }) {
  const actions = useTurnActions();
  const [text, setText] = useState(initial);
  const area = useRef<HTMLTextAreaElement>(null);
  const at = `edit:${entryId}`;
  const busy = actions?.busy === at;
  const error = actions?.error?.at === at ? actions.error.message : undefined;
  const content = editedContent(blocks, text);
  const attachments = content.length - (text.trim() ? 1 : 0);
  useEffect(() => {
    const el = area.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const submit = async () => {
    if (!actions || busy || content.length === 0) return;
    if (await actions.edit(entryId, content)) onDone();
  };
  return (
    <form
      className="ml-auto w-full max-w-[85%] min-w-0 space-y-2 rounded-2xl rounded-br-md border border-accent/50 bg-surface p-2.5 shadow-card"
      data-testid="edit-message-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label htmlFor={`edit-${entryId}`} className="sr-only">
        Edit your message
      </label>
      <textarea
        id={`edit-${entryId}`}
        ref={area}
        value={text}
        rows={Math.min(10, Math.max(2, text.split('\n').length))}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onDone();
          } else if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void submit();
          }
        }}
        className="block w-full resize-none bg-transparent px-1 text-[14px] leading-relaxed text-fg outline-none"
        data-testid="edit-message-input"
      />
      {error ? (
        <p role="alert" className="px-1 text-xs break-words text-bad" data-testid="edit-message-error">
          {error}
        </p>
      ) : null}
      <div className="flex flex-wrap items-center justify-end gap-1.5">
        <span className="mr-auto min-w-0 px-1 text-[11.5px] text-faint">
          Replaces this message and its answer{attachments > 0 ? `; ${attachments} attachment${attachments === 1 ? '' : 's'} kept` : ''}
        </span>
        <Button size="xs" variant="ghost" onClick={onDone} disabled={busy}>
          Cancel
        </Button>
        <Button size="xs" variant="primary" type="submit" loading={busy} disabled={content.length === 0} data-testid="edit-message-send">
          Send
        </Button>
      </div>
    </form>
  );
}

/** A small labelled action under a message. */
function ActionButton({
  icon: Icon,
  label,
  title,
  onClick,
  testId,
  busy,
  disabled,
}: {
  icon: LucideIcon;
  label: string;
  title: string;
  onClick: () => void;
  testId: string;
  busy?: boolean;
  disabled?: boolean;
}) {
  return (
    <button
      type="button"
      title={title}
      onClick={onClick}
      disabled={disabled || busy}
      data-testid={testId}
      className="inline-flex h-6 cursor-pointer items-center gap-1 rounded-md px-1.5 text-xs text-muted outline-none hover:bg-surface-2 hover:text-fg focus-visible:ring-2 focus-visible:ring-accent/40 disabled:cursor-not-allowed disabled:opacity-50"
    >
      <Icon size={12} className={cn('shrink-0', busy && 'animate-spin')} />
      {label}
    </button>
  );
}

/** Copy with a brief "Copied" in its place (announced to screen readers). */
function CopyAction({ text, what }: { text: string; what: 'message' | 'answer' }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  return (
    <button
      type="button"
      title={`Copy this ${what} (Markdown)`}
      onClick={async () => {
        window.clearTimeout(timer.current);
        try {
          await writeClipboard(text);
          setState('copied');
        } catch {
          setState('failed');
        }
        timer.current = window.setTimeout(() => setState('idle'), 1500);
      }}
      data-testid="copy-message"
      data-state={state}
      className="inline-flex h-6 cursor-pointer items-center gap-1 rounded-md px-1.5 text-xs text-muted outline-none hover:bg-surface-2 hover:text-fg focus-visible:ring-2 focus-visible:ring-accent/40"
    >
      {state === 'copied' ? <Check size={12} className="shrink-0 text-ok" /> : <Copy size={12} className="shrink-0" />}
      <span aria-live="polite">{state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}</span>
    </button>
  );
}

/** The end of an answer: Copy its text; on the last answer, Regenerate (replaces it with a new one). */
export const AnswerActions = memo(function AnswerActions({ text, regenerate }: { text: string; regenerate: boolean }) {
  const actions = useTurnActions();
  const error = actions?.error?.at === 'regenerate' ? actions.error.message : undefined;
  return (
    <div className="-mt-1" data-testid="answer-actions">
      <div className="flex flex-wrap items-center gap-0.5">
        {text ? <CopyAction text={text} what="answer" /> : null}
        {regenerate && actions ? (
          <ActionButton
            icon={RefreshCw}
            label="Regenerate"
            title="Answer the last message again (replaces this answer)"
            onClick={() => void actions.regenerate('regenerate')}
            busy={actions.busy === 'regenerate'}
            disabled={actions.busy !== undefined}
            testId="regenerate"
          />
        ) : null}
      </div>
      {error ? (
        <p role="alert" className="mt-1 text-xs break-words text-bad" data-testid="regenerate-error">
          {error}
        </p>
      ) : null}
    </div>
  );
});

export const AssistantText = memo(function AssistantText({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <div className="min-w-0" data-testid="assistant-message" data-streaming={String(streaming)}>
      <Markdown text={text} streaming={streaming} />
      {streaming ? <span className="ml-0.5 inline-block h-4 w-1.5 animate-pulse rounded-sm bg-accent align-middle" aria-hidden /> : null}
    </div>
  );
});

export const Thought = memo(function Thought({ text, streaming }: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="rounded-lg border border-dashed border-line-strong" data-testid="thought" data-open={String(open)}>
      <button
        type="button"
        onClick={() => setOpen((v) => !v)}
        aria-expanded={open}
        className="flex w-full cursor-pointer items-center gap-2 px-3 py-1.5 text-left text-xs text-muted hover:text-fg"
      >
        <ChevronRight size={13} className={cn('transition-transform', open && 'rotate-90')} />
        <Brain size={13} className="text-violet" />
        <span>{streaming ? 'Thinking…' : 'Thought'}</span>
        {!open ? <span className="truncate text-faint">{text.slice(0, 120)}</span> : null}
      </button>
      {open ? (
        <div className="border-t border-dashed border-line-strong px-3 py-2 text-[13px] leading-relaxed whitespace-pre-wrap text-muted">
          {text}
        </div>
      ) : null}
    </div>
  );
});

export const CompactionMarker = memo(function CompactionMarker({ summary, tokensBefore }: { summary: string; tokensBefore: number }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="py-1" data-testid="compaction-marker">
      <div className="flex items-center gap-3 text-xs text-muted">
        <span className="h-px flex-1 bg-line" />
        <button
          type="button"
          onClick={() => setOpen((v) => !v)}
          aria-expanded={open}
          className="inline-flex cursor-pointer items-center gap-1.5 rounded-full border border-line bg-surface px-2.5 py-1 hover:text-fg"
        >
          <Archive size={12} />
          <span data-testid="compaction-label">
            {tokensBefore > 0 ? `compacted ${tokensBefore.toLocaleString()} tokens` : 'conversation compacted'}
          </span>
          <ChevronRight size={12} className={cn('transition-transform', open && 'rotate-90')} />
        </button>
        <span className="h-px flex-1 bg-line" />
      </div>
      {open ? (
        <div className="mt-2 rounded-lg border border-line bg-surface-2 px-3 py-2" data-testid="compaction-summary">
          <Markdown text={summary} />
        </div>
      ) : null}
    </div>
  );
});

const NOTICE = {
  length: { icon: Scissors, title: 'The answer was cut off: the model reached its output limit.', tone: 'warn' },
  error: { icon: AlertTriangle, title: 'The turn failed.', tone: 'bad' },
  aborted: { icon: CircleStop, title: 'Stopped.', tone: 'neutral' },
} as const;

export const StopNotice = memo(function StopNotice({
  reason,
  message,
  errorKind,
  provider,
  retry,
}: {
  reason: 'length' | 'error' | 'aborted';
  message?: string;
  errorKind?: string;
  provider?: string;
  retry?: boolean;
}) {
  const n = NOTICE[reason];
  const Icon = n.icon;
  const actions = useTurnActions();
  // a 401/403: the key is missing, wrong or expired; its fix is in the provider's settings
  const auth = reason === 'error' && errorKind === 'auth_expired' && provider;
  const error = actions?.error?.at === 'retry' ? actions.error.message : undefined;
  return (
    <div
      role={reason === 'error' ? 'alert' : undefined}
      data-testid="stop-notice"
      data-reason={reason}
      data-error-kind={errorKind ?? ''}
      className={cn(
        'flex items-start gap-2 rounded-lg border px-3 py-2 text-[12.5px]',
        n.tone === 'bad' && 'border-bad/30 bg-bad-soft text-bad',
        n.tone === 'warn' && 'border-warn/30 bg-warn-soft text-warn',
        n.tone === 'neutral' && 'border-line bg-surface-2 text-muted',
      )}
    >
      <Icon size={14} className="mt-0.5 shrink-0" />
      <div className="min-w-0 flex-1">
        <p className="font-medium">
          {auth ? `The turn failed: ${actions?.providerLabel(provider) ?? provider} refused the credentials.` : n.title}
        </p>
        {message ? <p className="mt-0.5 font-mono text-xs break-words opacity-90">{message}</p> : null}
        {(retry && actions) || auth ? (
          <div className="mt-2 flex flex-wrap items-center gap-1.5">
            {auth ? (
              <Button
                size="xs"
                variant="secondary"
                icon={KeyRound}
                onClick={() => openProviderSettings(provider)}
                data-testid="open-provider-settings"
                title="Open the provider's settings: API key and URL"
              >
                {actions ? `Open ${actions.providerLabel(provider)} settings` : 'Open provider settings'}
              </Button>
            ) : null}
            {retry && actions ? (
              <Button
                size="xs"
                variant="secondary"
                icon={RotateCcw}
                onClick={() => void actions.regenerate('retry')}
                loading={actions.busy === 'retry'}
                disabled={actions.busy !== undefined}
                data-testid="retry-turn"
                title="Answer the last message again (replaces this failed answer)"
              >
                Retry
              </Button>
            ) : null}
          </div>
        ) : null}
        {error ? (
          <p className="mt-1.5 text-xs break-words" data-testid="retry-error">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
});
