import { AlertTriangle, Archive, Brain, ChevronRight, CircleStop, FileText, ImageOff, Scissors } from 'lucide-react';
import { memo, useState } from 'react';
import { parseAttachedFile } from '../../lib/chat/attachments.ts';
import type { Block } from '../../lib/chat/transcript.ts';
import { formatBytes } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { Markdown } from './rich-lazy.tsx';

/** The transcript's message variants: user bubble, assistant text, thought, compaction marker, stop notice. */

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

export const UserMessage = memo(function UserMessage({ blocks, queued }: { blocks: Block[]; queued?: boolean }) {
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
  return (
    <div className="flex justify-end" data-testid="user-message">
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
        {texts.length ? <UserText text={texts.join('\n')} /> : null}
        {queued ? <p className="text-[11px] text-muted">sent while the previous step streamed</p> : null}
      </div>
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

export const StopNotice = memo(function StopNotice({ reason, message }: { reason: 'length' | 'error' | 'aborted'; message?: string }) {
  const n = NOTICE[reason];
  const Icon = n.icon;
  return (
    <div
      role={reason === 'error' ? 'alert' : undefined}
      data-testid="stop-notice"
      data-reason={reason}
      className={cn(
        'flex items-start gap-2 rounded-lg border px-3 py-2 text-[12.5px]',
        n.tone === 'bad' && 'border-bad/30 bg-bad-soft text-bad',
        n.tone === 'warn' && 'border-warn/30 bg-warn-soft text-warn',
        n.tone === 'neutral' && 'border-line bg-surface-2 text-muted',
      )}
    >
      <Icon size={14} className="mt-0.5 shrink-0" />
      <div className="min-w-0">
        <p className="font-medium">{n.title}</p>
        {message ? <p className="mt-0.5 font-mono text-xs break-words opacity-90">{message}</p> : null}
      </div>
    </div>
  );
});
