import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams } from '@tanstack/react-router';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { addOptimistic, dropOptimistic, primeConversation, useConversation } from '../../api/chat-conversation.ts';
import { chatKeys, createConversation, newConversationId, titleIfUntitled, useConversations } from '../../api/chat-sessions.ts';
import { compactConversation, idempotentEntryId, putAttachment, sendMessage, stopTurn } from '../../api/chat-turns.ts';
import { useConnection } from '../../api/client.ts';
import { useFunctions } from '../../api/functions.ts';
import { usePresence } from '../../api/presence.ts';
import { type Attachment, attachmentBlocks } from '../../lib/chat/attachments.ts';
import { modelLabel, readsImages } from '../../lib/chat/models.ts';
import { type ChatMode, updateChatPrefs, useChatPrefs } from '../../lib/chat/prefs.ts';
import { contextUsage, estimateContextTokens } from '../../lib/chat/tokens.ts';
import { type Block, titleFrom } from '../../lib/chat/transcript.ts';
import { buildView, keepStable, type ViewItem } from '../../lib/chat/view.ts';
import { isTyping, useKeydown } from '../../lib/keyboard.ts';
import { ChatBanner, type ChatNotice, ChatWelcome, ConversationNotFound, NoticeLine, REQUIRED_FUNCTIONS } from './chat-status.tsx';
import { Composer } from './composer.tsx';
import { ConversationSidebar } from './conversation-sidebar.tsx';
import { ModelPicker } from './model-picker.tsx';
import { preloadRich } from './rich-lazy.tsx';
import { SessionBar } from './session-bar.tsx';
import { TranscriptView } from './transcript-view.tsx';
import { useChatModel } from './use-chat-model.ts';
import { WorkingDirSlot } from './working-dir-slot.tsx';
import { ChatWorktreeEvents, WorktreeNoticeList } from './worktree-notices.tsx';

/**
 * A callback whose identity never changes and that always runs the latest `fn`: what the memoised
 * sidebar and composer receive, so a streaming answer (one update per frame) re-renders the
 * transcript only.
 */
function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const latest = useRef(fn);
  useLayoutEffect(() => {
    latest.current = fn;
  });
  return useCallback((...args: A) => latest.current(...args), []);
}

const NO_CONVERSATIONS: never[] = [];

/**
 * The id the new conversation of this tab will have: kept for the tab's life (session storage), so
 * a reload of `#/chat` finds the working directory picked for it still there.
 */
const DRAFT_KEY = 'eng-chat-draft';
function draftConversationId(): string {
  try {
    const kept = sessionStorage.getItem(DRAFT_KEY);
    if (kept) return kept;
  } catch {
    // no session storage: the draft lasts as long as the page
  }
  return nextDraftConversationId();
}
function nextDraftConversationId(): string {
  const id = newConversationId();
  try {
    sessionStorage.setItem(DRAFT_KEY, id);
  } catch {
    // as above
  }
  return id;
}

/** Below Tailwind's `md`: the conversation list lies over the conversation (conversation-sidebar.tsx). */
const NARROW = '(max-width: 767.98px)';

/**
 * Seed 2.9 "Chat": the conversation sidebar, the open conversation's transcript and the composer.
 * The open conversation is the URL's (`#/chat/<session_id>`, issue 25 item 2); `#/chat` is a new
 * one, whose session is made at its first send (under the id `draftId`, chosen up front so a
 * working directory picked before the first message goes with it), which moves the URL to it.
 * During an outage everything keeps its last known state, read-only (issue 25 item 1).
 */
export function ChatPage() {
  const prefs = useChatPrefs();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const conversations = useConversations();
  const model = useChatModel();
  const connection = useConnection();
  const functions = useFunctions();
  const presence = usePresence();
  const activeId = (useParams({ strict: false }) as { sessionId?: string }).sessionId;
  const [draftId, setDraftId] = useState(draftConversationId);
  const [creating, setCreating] = useState(false);
  const conversation = useConversation(activeId);
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [notice, setNotice] = useState<ChatNotice | undefined>();
  const [compacting, setCompacting] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);

  useEffect(preloadRich, []);

  const missing = useMemo(() => {
    if (!functions.data) return [];
    const have = new Set(functions.data.map((f) => f.function_id));
    return REQUIRED_FUNCTIONS.filter((f) => !have.has(f.id));
  }, [functions.data]);
  // the stack came back: read the open conversation again (events while it was away are not replayed)
  const wasMissing = useRef(false);
  const { reload } = conversation;
  useEffect(() => {
    if (missing.length > 0) wasMissing.current = true;
    else if (wasMissing.current) {
      wasMissing.current = false;
      void reload();
      void queryClient.invalidateQueries({ queryKey: chatKeys.all });
    }
  }, [missing.length, reload, queryClient]);

  const running = conversation.status === 'working';
  const previous = useRef<ViewItem[]>([]);
  const items = useMemo(() => {
    const next = keepStable(previous.current, buildView(conversation.entries, { pending: conversation.pending, turnActive: running }));
    previous.current = next;
    return next;
  }, [conversation.entries, conversation.pending, running]);
  const usage = useMemo(
    () => contextUsage(estimateContextTokens(conversation.entries), model.selected?.context_window),
    [conversation.entries, model.selected],
  );

  const online = connection.status === 'open';
  const notFound = !!activeId && !!conversation.notFound;
  const canSend = online && missing.length === 0 && !!model.selected && !model.offline && !creating;
  const disabledReason = !online
    ? 'The engine is unreachable: messages can be sent once it is back'
    : missing.length
      ? 'The chat stack is not fully connected'
      : !model.selected
        ? 'No model: configure a provider in the model picker'
        : model.offline
          ? 'The model catalogue is unreachable'
          : undefined;
  const vision = readsImages(model.selected);
  const visionNote =
    !vision && model.selected
      ? `${modelLabel(model.selected)} does not read images: they are not sent, the model is told they were attached. Pick a vision model to send them.`
      : undefined;

  /** "New chat": an empty composer at `#/chat`; nothing is stored until the first send. */
  const newChat = useCallback(() => {
    if (activeId) void navigate({ to: '/chat' });
    setAttachments([]);
    setNotice(undefined);
    requestAnimationFrame(() => textarea.current?.focus());
  }, [activeId, navigate]);

  const send = useStable(async (text: string): Promise<boolean> => {
    const chosen = model.selected;
    if (!chosen) return false;
    setNotice(undefined);
    let sessionId = activeId;
    if (!sessionId) {
      // the first send of a new conversation makes its session, then the URL names it
      sessionId = draftId;
      setCreating(true);
      try {
        let made = await createConversation(queryClient, sessionId);
        // a tab duplicated with its session storage may have sent under this id already: take another
        if (!made.created && made.meta.message_count > 0) {
          sessionId = nextDraftConversationId();
          made = await createConversation(queryClient, sessionId);
        }
        primeConversation(sessionId, made.meta);
      } catch (err) {
        setNotice({ tone: 'bad', text: `session::ensure failed — ${(err as Error).message}` });
        return false;
      } finally {
        setCreating(false);
      }
      setDraftId(nextDraftConversationId());
      void navigate({ to: '/chat/$sessionId', params: { sessionId }, replace: true });
    }
    const imageIds = new Map<string, string>();
    if (vision) {
      for (const a of attachments.filter((x) => x.kind === 'image' && x.data)) {
        const id = await putAttachment(sessionId, { name: a.name, mime: a.mime, data: a.data as string });
        if (id) imageIds.set(a.id, id);
      }
    }
    const content: Block[] = [
      ...(text ? [{ type: 'text' as const, text }] : []),
      ...attachmentBlocks(attachments, { vision, modelLabel: modelLabel(chosen), imageIds }),
    ];
    const key = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    const entryId = idempotentEntryId(key);
    addOptimistic(sessionId, { entry_id: entryId, revision: -1, message: { role: 'user', content } });
    const sentAttachments = attachments;
    setAttachments([]);
    try {
      await sendMessage({
        sessionId,
        content,
        model: chosen,
        effort: prefs.effort,
        mode: prefs.mode,
        idempotencyKey: key,
        fsRoot: prefs.workingDirs[sessionId],
      });
      void titleIfUntitled(sessionId, titleFrom(text || sentAttachments[0]?.name || 'Attachment')).catch(() => undefined);
      return true;
    } catch (err) {
      dropOptimistic(sessionId, entryId);
      setAttachments(sentAttachments);
      setNotice({ tone: 'bad', text: `harness::send failed — ${(err as Error).message}` });
      return false;
    }
  });

  const stop = useStable(() => {
    if (activeId)
      void stopTurn(activeId).catch((err) => setNotice({ tone: 'bad', text: `harness::stop failed — ${(err as Error).message}` }));
  });

  const compact = useStable(async () => {
    if (!activeId || !model.selected || compacting) return;
    setCompacting(true);
    setNotice({ tone: 'info', text: 'Compacting: summarising the conversation through context::compact…' });
    try {
      const out = await compactConversation(activeId, model.selected);
      setNotice(
        out.status === 'ok'
          ? { tone: 'ok', text: `Compacted ${out.tokensBefore.toLocaleString()} tokens; later turns start from the summary.` }
          : { tone: 'warn', text: `Not compacted: ${out.message}` },
      );
    } catch (err) {
      setNotice({ tone: 'bad', text: `context::compact failed — ${(err as Error).message}` });
    } finally {
      setCompacting(false);
    }
  });

  useKeydown((e) => {
    if ((e.metaKey || e.ctrlKey) && e.key === '.' && running) {
      e.preventDefault();
      stop();
      return;
    }
    if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
    if (e.key === 'Escape' && running && !document.querySelector('[role="dialog"]')) {
      e.preventDefault();
      stop();
    } else if (e.key === 'n' && !isTyping(e.target) && !document.querySelector('[role="dialog"]')) {
      e.preventDefault();
      newChat();
    }
  });

  const picker = useMemo(
    () => (
      <ModelPicker
        groups={model.groups}
        loading={model.loading}
        offline={model.offline}
        selected={model.selected}
        effort={model.effort}
        onSelect={model.select}
        onEffort={model.setEffort}
      />
    ),
    [model.groups, model.loading, model.offline, model.selected, model.effort, model.select, model.setEffort],
  );

  // a new conversation's working directory is kept under the id its session will have
  const slotId = activeId ?? draftId;
  const workingDir = prefs.workingDirs[slotId];
  const workingDirSlot = useMemo(
    () => <WorkingDirSlot sessionId={slotId} value={workingDir} disabled={!online} />,
    [slotId, workingDir, online],
  );
  const onToggleSidebar = useStable(() => updateChatPrefs((p) => ({ sidebar: { collapsed: !p.sidebar.collapsed } })));
  // on a narrow screen the list covers the conversation: it steps aside once one is picked
  const closeListWhenNarrow = () => {
    if (!prefs.sidebar.collapsed && window.matchMedia(NARROW).matches) updateChatPrefs(() => ({ sidebar: { collapsed: true } }));
  };
  // the sidebar's rows are links to #/chat/<id>: opening one only tidies up here
  const onOpenConversation = useStable(() => {
    setNotice(undefined);
    closeListWhenNarrow();
  });
  const onNewChat = useStable(() => {
    closeListWhenNarrow();
    newChat();
  });
  const onDeleted = useStable((id: string) => {
    if (id === activeId) void navigate({ to: '/chat', replace: true });
  });
  const onMode = useStable((mode: ChatMode) => updateChatPrefs(() => ({ mode })));
  const onCommand = useStable((name: string) => {
    if (name === 'compact') void compact();
  });
  const onCompact = useStable(() => void compact());

  return (
    <div
      className="relative flex min-h-0 flex-1"
      data-testid="chat-page"
      // the conversation shown, or the id a new one's session will have once its first message is sent
      data-conversation-id={slotId}
      data-new={String(!activeId)}
    >
      {presence.worktrees ? <ChatWorktreeEvents /> : null}
      <ConversationSidebar
        conversations={conversations.data ?? NO_CONVERSATIONS}
        loading={conversations.isPending}
        active={activeId}
        collapsed={prefs.sidebar.collapsed}
        onToggle={onToggleSidebar}
        onOpen={onOpenConversation}
        onNew={onNewChat}
        onDeleted={onDeleted}
      />
      <div className="flex min-w-0 flex-1 flex-col">
        {activeId && !notFound ? (
          <SessionBar
            sessionId={activeId}
            title={conversation.title}
            status={conversation.status}
            statusReason={conversation.statusReason}
            usage={usage}
            onCompact={onCompact}
          />
        ) : null}
        <ChatBanner online={online} missing={missing} error={conversation.error} />
        {notFound ? (
          <ConversationNotFound sessionId={activeId} onNew={onNewChat} />
        ) : activeId && (items.length > 0 || !conversation.loaded) ? (
          <TranscriptView
            items={items}
            sessionId={activeId}
            footer={notice ? <NoticeLine notice={notice} onClose={() => setNotice(undefined)} /> : null}
          />
        ) : (
          <ChatWelcome hasModels={model.hasModels} offline={model.offline} notice={notice} onCloseNotice={() => setNotice(undefined)} />
        )}
        {notFound ? null : <WorktreeNoticeList sessionId={slotId} />}
        {notFound ? null : (
          <Composer
            mode={prefs.mode}
            onMode={onMode}
            picker={picker}
            workingDir={workingDirSlot}
            running={running}
            canSend={canSend}
            disabledReason={disabledReason}
            attachments={attachments}
            onAttachments={setAttachments}
            visionNote={visionNote}
            onSend={send}
            onCommand={onCommand}
            onStop={stop}
            textareaRef={textarea}
          />
        )}
      </div>
    </div>
  );
}
