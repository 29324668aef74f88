import { FileText, ImageOff, X } from 'lucide-react';
import type { Attachment } from '../../lib/chat/attachments.ts';
import { formatBytes } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';

/** Previews of what the next message carries: image thumbnails, the first lines of text files, refusals with their reason. */
export function AttachmentTray({
  attachments,
  onRemove,
  visionNote,
}: {
  attachments: Attachment[];
  onRemove: (id: string) => void;
  /** Why images will not be sent (the model does not read images). */
  visionNote?: string;
}) {
  if (attachments.length === 0) return null;
  const hasImages = attachments.some((a) => a.kind === 'image');
  return (
    <div className="border-b border-line px-3 pt-3 pb-2" data-testid="attachment-tray">
      <div className="flex flex-wrap gap-2">
        {attachments.map((a) => {
          const refused = a.kind === 'refused' || (a.kind === 'image' && visionNote !== undefined);
          return (
            <div
              key={a.id}
              data-testid="attachment-preview"
              data-kind={a.kind}
              data-refused={String(refused)}
              className={cn(
                'group relative flex w-44 flex-col overflow-hidden rounded-lg border bg-surface-2 text-xs',
                refused ? 'border-warn/50' : 'border-line',
              )}
            >
              {a.kind === 'image' && a.data ? (
                <img
                  src={`data:${a.mime};base64,${a.data}`}
                  alt={a.name}
                  className={cn('h-20 w-full object-cover', refused && 'opacity-40 grayscale')}
                />
              ) : a.kind === 'text' ? (
                <pre className="h-20 overflow-hidden px-2 py-1.5 font-mono text-[10px] leading-snug text-muted" data-testid="text-preview">
                  {(a.data ?? '').split('\n').slice(0, 6).join('\n')}
                </pre>
              ) : (
                <div className="flex h-20 items-center justify-center text-faint">
                  <ImageOff size={18} />
                </div>
              )}
              <div className="flex items-center gap-1 border-t border-line px-2 py-1">
                {a.kind === 'text' ? <FileText size={11} className="shrink-0 text-faint" /> : null}
                <span className="truncate font-medium text-fg" title={a.name}>
                  {a.name}
                </span>
                <span className="ml-auto shrink-0 text-faint">{formatBytes(a.size)}</span>
              </div>
              {a.error ? <p className="px-2 pb-1 text-[11px] text-warn">{a.error}</p> : null}
              <button
                type="button"
                aria-label={`Remove ${a.name}`}
                onClick={() => onRemove(a.id)}
                className="absolute top-1 right-1 flex size-5 cursor-pointer items-center justify-center rounded-full bg-surface/90 text-muted opacity-80 hover:text-fg group-hover:opacity-100"
              >
                <X size={12} />
              </button>
            </div>
          );
        })}
      </div>
      {hasImages && visionNote ? (
        <p className="mt-2 text-xs text-warn" data-testid="vision-refusal">
          {visionNote}
        </p>
      ) : null}
    </div>
  );
}
