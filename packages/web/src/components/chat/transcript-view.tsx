import { elementScroll, useVirtualizer } from '@tanstack/react-virtual';
import { ArrowDown } from 'lucide-react';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ViewItem } from '../../lib/chat/view.ts';
import { Button } from '../ui/button.tsx';
import { CallGroup } from './function-card.tsx';
import { AnswerActions, AssistantText, CompactionMarker, StopNotice, Thought, UserMessage } from './message-views.tsx';
import { TurnActionsProvider } from './turn-actions.tsx';

/**
 * The transcript, virtualised (a conversation of hundreds of entries renders only what is on
 * screen; rows are measured as they render). It follows the end while the user is there — a
 * streaming answer stays in view — and leaves the scroll position alone once they scroll up.
 */

function estimate(item: ViewItem | undefined): number {
  if (!item) return 60;
  if (item.kind === 'text') return (item.text.startsWith('```') ? 48 : 8) + Math.ceil(item.text.length / 90) * 22;
  if (item.kind === 'calls') return 48 * item.calls.length + (item.calls.length > 1 ? 34 : 0);
  if (item.kind === 'user') return 92;
  if (item.kind === 'actions') return 28;
  return 44;
}

const Row = memo(function Row({ item, sessionId }: { item: ViewItem; sessionId: string }) {
  switch (item.kind) {
    case 'user':
      return <UserMessage entryId={item.entryId} blocks={item.blocks} queued={item.queued} editable={item.editable} />;
    case 'text':
      return <AssistantText text={item.text} streaming={item.streaming} />;
    case 'thought':
      return <Thought text={item.text} streaming={item.streaming} />;
    case 'calls':
      return <CallGroup calls={item.calls} sessionId={sessionId} />;
    case 'compaction':
      return <CompactionMarker summary={item.summary} tokensBefore={item.tokensBefore} />;
    case 'notice':
      return (
        <StopNotice reason={item.reason} message={item.message} errorKind={item.errorKind} provider={item.provider} retry={item.retry} />
      );
    case 'actions':
      return <AnswerActions text={item.text} regenerate={item.regenerate} />;
  }
});

export function TranscriptView({ items, sessionId, footer }: { items: ViewItem[]; sessionId: string; footer?: React.ReactNode }) {
  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const [showJump, setShowJump] = useState(false);
  // where the virtualizer itself last moved the scroll (keeping rows in place as the ones above
  // are measured): such a move is not the user leaving the end
  const ownWrite = useRef<number | undefined>(undefined);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => estimate(items[i]),
    getItemKey: (i) => items[i]?.key ?? i,
    overscan: 4,
    paddingStart: 20,
    paddingEnd: 12,
    scrollToFn: (offset, options, instance) => {
      ownWrite.current = offset + (options.adjustments ?? 0);
      elementScroll(offset, options, instance);
    },
  });

  const toEnd = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    el.scrollTop = el.scrollHeight;
  }, []);

  // a new conversation opens at its end, and follows it from there. Not scrollToIndex: the
  // virtualizer keeps re-aiming at that row for frames afterwards, and while an answer streams in
  // rows below it, that pulled the view back up (which read as the user leaving the end)
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when the conversation changes
  useLayoutEffect(() => {
    atEnd.current = true;
    setShowJump(false);
    toEnd();
  }, [sessionId]);

  // a message sent (the last row is a user message it has not shown before) brings the view back
  // to the end, wherever the user had scrolled: they want to see it answered
  const lastItem = items[items.length - 1];
  const sentKey = lastItem?.kind === 'user' ? lastItem.key : undefined;
  const seenSent = useRef(sentKey);
  useLayoutEffect(() => {
    if (!sentKey || sentKey === seenSent.current) return;
    seenSent.current = sentKey;
    atEnd.current = true;
    setShowJump(false);
    toEnd();
  }, [sentKey, toEnd]);

  const total = virtualizer.getTotalSize();
  // while at the end, stay there as rows arrive, stream or get measured taller: once per frame,
  // in the frame's own layout (a scroll in the commit would force a second layout per update)
  const frame = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-run when the content grows
  useLayoutEffect(() => {
    if (!atEnd.current || frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (atEnd.current) toEnd();
    });
  }, [items, total, toEnd]);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    let last = el.scrollTop;
    // content growing below moves the end away without a scroll up: only the user leaving the end
    // (scrolling up) stops the following, and reaching the end again resumes it
    const onScroll = () => {
      const end = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
      const own = ownWrite.current !== undefined && Math.abs(el.scrollTop - ownWrite.current) < 2;
      ownWrite.current = undefined;
      if (end) atEnd.current = true;
      else if (el.scrollTop < last - 1 && !own) atEnd.current = false;
      last = el.scrollTop;
      setShowJump(!atEnd.current);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => el.removeEventListener('scroll', onScroll);
  }, []);

  const rows = virtualizer.getVirtualItems();
  const lastUser = useMemo(() => items.findLast((item) => item.kind === 'user')?.key, [items]);
  return (
    <TurnActionsProvider sessionId={sessionId} lastUserEntry={lastUser}>
      <div className="relative min-h-0 flex-1">
        <div
          ref={scroller}
          className="h-full overflow-y-auto"
          data-testid="chat-transcript"
          // sized by the page, never by its rows: a growing answer lays out and paints inside it only
          style={{ overflowAnchor: 'none', contain: 'strict' }}
        >
          <div className="relative mx-auto w-full max-w-3xl px-4" style={{ height: total }}>
            {rows.map((row) => {
              const item = items[row.index];
              if (!item) return null;
              return (
                <div
                  key={row.key}
                  data-index={row.index}
                  data-kind={item.kind}
                  ref={virtualizer.measureElement}
                  className={item.kind === 'text' && item.more ? 'absolute inset-x-4 pb-2' : 'absolute inset-x-4 pb-3'}
                  style={{ transform: `translateY(${row.start}px)`, contain: 'layout style' }}
                >
                  <Row item={item} sessionId={sessionId} />
                </div>
              );
            })}
          </div>
          {footer ? <div className="mx-auto w-full max-w-3xl px-4 pb-3">{footer}</div> : null}
        </div>
        {showJump ? (
          <Button
            size="xs"
            icon={ArrowDown}
            className="absolute bottom-3 left-1/2 -translate-x-1/2 shadow-pop"
            onClick={() => {
              atEnd.current = true;
              toEnd();
            }}
          >
            Latest
          </Button>
        ) : null}
      </div>
    </TurnActionsProvider>
  );
}
