import { effortOptions, type Model } from '../lib/chat/models.ts';
import type { ChatMode } from '../lib/chat/prefs.ts';
import { type Block, contextOf, type Entry } from '../lib/chat/transcript.ts';
import { noteOwnDecision } from './chat-calls.ts';
import { emitConfirmed } from './chat-live.ts';
import { CONSOLE_METADATA } from './chat-sessions.ts';
import { callEngine } from './client.ts';

/**
 * What the composer and the cards do (console-worker.md §2.3, §2.6, §2.7): start a turn with
 * `harness::send`, stop it with `harness::stop`, answer the last message again or replace it
 * (`harness::regenerate`, `harness::edit`), decide held calls with `approval::resolve`, and
 * /compact through `context::compact` plus the `compaction` custom entry.
 */

/** What every turn is started with: the model, its effort, the mode and the conversation's working directory. */
export interface TurnSettings {
  sessionId: string;
  model: Model;
  effort?: string;
  mode: ChatMode;
  /** The conversation's working directory (the worktrees surface sets it). */
  fsRoot?: string;
}

export interface SendInput extends TurnSettings {
  content: Block[];
  /** Also the user entry's id: `e_idem_<key>`. */
  idempotencyKey: string;
}

export interface SendAnswer {
  session_id: string;
  turn_id: string;
  accepted: boolean;
  merged?: boolean;
  queued?: boolean;
  deduplicated?: boolean;
}

/** harness::regenerate / harness::edit: the new turn, the message it answers, the entries that left the path. */
export interface RewindAnswer extends SendAnswer {
  user_entry_id: string;
  superseded: string[];
}

/** `e_idem_<key with anything but [A-Za-z0-9_-] replaced by _>` (§2.3). */
export function idempotentEntryId(key: string): string {
  return `e_idem_${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The model and `options` of a harness call, for the user message `messageId` (§2.3). */
function turnFields(input: TurnSettings, messageId: string) {
  return {
    model: input.model.id,
    provider: input.model.provider,
    options: {
      mode: input.mode,
      ...effortOptions(input.model, input.effort),
      metadata: {
        session_id: input.sessionId,
        message_id: messageId,
        surface: 'console',
        ...(input.fsRoot ? { fs_scope: { root: input.fsRoot } } : {}),
      },
    },
  };
}

/** A user message as harness::send takes it: a string when it is one text block. */
function wireMessage(content: Block[]) {
  const onlyText = content.length === 1 && content[0]?.type === 'text';
  return onlyText ? (content[0] as { text: string }).text : { role: 'user', content, timestamp: Date.now() };
}

export function sendMessage(input: SendInput): Promise<SendAnswer> {
  return callEngine<SendAnswer>(
    'harness::send',
    {
      session_id: input.sessionId,
      message: wireMessage(input.content),
      idempotency_key: input.idempotencyKey,
      session: { metadata: CONSOLE_METADATA },
      ...turnFields(input, idempotentEntryId(input.idempotencyKey)),
    },
    { timeoutMs: 30_000 },
  );
}

/**
 * Retry (after a failed answer) and Regenerate (after a finished one): the last user message
 * answered again; the answer it replaces leaves the conversation (harness::regenerate). Refused
 * while a turn runs, or when `userEntryId` is no longer the last user message.
 */
export function regenerateAnswer(input: TurnSettings & { userEntryId: string }): Promise<RewindAnswer> {
  return callEngine<RewindAnswer>(
    'harness::regenerate',
    { session_id: input.sessionId, entry_id: input.userEntryId, ...turnFields(input, input.userEntryId) },
    { timeoutMs: 30_000 },
  );
}

/** Edit-and-resend: the last user message replaced by `content` and answered (harness::edit). */
export function editAndResend(input: TurnSettings & { entryId: string; content: Block[]; idempotencyKey: string }): Promise<RewindAnswer> {
  return callEngine<RewindAnswer>(
    'harness::edit',
    {
      session_id: input.sessionId,
      entry_id: input.entryId,
      message: wireMessage(input.content),
      idempotency_key: input.idempotencyKey,
      ...turnFields(input, idempotentEntryId(input.idempotencyKey)),
    },
    { timeoutMs: 30_000 },
  );
}

export function stopTurn(sessionId: string): Promise<{ stopping: boolean }> {
  return callEngine('harness::stop', { session_id: sessionId });
}

export async function resolveApproval(input: {
  sessionId: string;
  callId: string;
  functionId: string;
  decision: 'allow' | 'deny';
  reason?: string;
  always?: boolean;
}): Promise<{ resolved: boolean }> {
  // "Always": a per-session grant first, so the next call of this function is not held
  if (input.always) await callEngine('approval::approve-always', { session_id: input.sessionId, function_id: input.functionId });
  const res = await callEngine<{ resolved: boolean }>('approval::resolve', {
    session_id: input.sessionId,
    function_call_id: input.callId,
    decision: input.decision,
    ...(input.reason ? { reason: input.reason } : {}),
  });
  if (res.resolved) {
    // the card shows who decided and how (issue 25 item 3), and leaves the held state now
    noteOwnDecision(input.sessionId, input.callId, input);
    emitConfirmed({
      type: 'pending-resolved',
      session_id: input.sessionId,
      function_call_id: input.callId,
      outcome: input.decision,
      reason: input.reason,
    });
  }
  return res;
}

export type CompactOutcome =
  | { status: 'ok'; summary: string; tokensBefore: number; tokensAfter?: number }
  | { status: 'busy' | 'empty' | 'overflow'; message: string };

/**
 * /compact (§2.6): refused while a turn runs; the messages the model would see next go to
 * `context::compact` (the previous summary folded in), then a `compaction` custom entry anchors
 * later turns. The transcript itself is untouched.
 */
export async function compactConversation(sessionId: string, model: Model): Promise<CompactOutcome> {
  const status = await callEngine<{ status?: string } | null>('harness::status', { session_id: sessionId }).catch(() => null);
  if (status?.status === 'running' || status?.status === 'awaiting_functions')
    return { status: 'busy', message: 'a turn is running: /compact once it has finished' };
  const entries: Entry[] = [];
  let cursor: string | undefined;
  do {
    const page = await callEngine<{ messages: Entry[]; next_cursor?: string }>('session::messages', {
      session_id: sessionId,
      limit: 500,
      include_custom: true,
      ...(cursor ? { cursor } : {}),
    });
    entries.push(...page.messages);
    cursor = page.next_cursor;
  } while (cursor);
  const context = contextOf(entries);
  const result = await callEngine<{
    status: 'ok' | 'busy' | 'empty' | 'overflow';
    summary?: string;
    tail_start_index?: number | null;
    tokens_before?: number;
    tokens_after?: number;
  }>(
    'context::compact',
    {
      messages: context.messages.map((e) => e.message),
      model: {
        id: model.id,
        provider: model.provider,
        limits: { context_window: model.context_window, max_output_tokens: model.max_output_tokens ?? 4096 },
      },
      options: { lease_key: sessionId, ...(context.summary ? { previous_summary: context.summary } : {}) },
    },
    // the summariser's budget is 320 s (§2.6)
    { timeoutMs: 330_000 },
  );
  if (result.status !== 'ok' || !result.summary) {
    const message =
      result.status === 'busy'
        ? 'a compaction of this conversation is already running'
        : result.status === 'empty'
          ? 'nothing to compact yet: the conversation is shorter than the turns it keeps'
          : 'the conversation is too large for the model to summarise';
    return { status: result.status === 'ok' ? 'empty' : result.status, message };
  }
  const tailIndex = result.tail_start_index;
  const tail = tailIndex === null || tailIndex === undefined ? null : (context.messages[tailIndex]?.entry_id ?? null);
  await callEngine('session::append', {
    session_id: sessionId,
    custom: {
      custom_type: 'compaction',
      data: { summary: result.summary, tail_start_entry_id: tail, tokens_before: result.tokens_before ?? 0, timestamp: Date.now() },
    },
  });
  return { status: 'ok', summary: result.summary, tokensBefore: result.tokens_before ?? 0, tokensAfter: result.tokens_after };
}

/** Store an image beside the transcript (`session::put-attachment`); its id links the image block. */
export async function putAttachment(sessionId: string, file: { name: string; mime: string; data: string }): Promise<string | undefined> {
  try {
    const res = await callEngine<{ attachment: { attachment_id: string } }>(
      'session::put-attachment',
      { session_id: sessionId, name: file.name, mime: file.mime, data: file.data },
      { timeoutMs: 30_000 },
    );
    return res.attachment.attachment_id;
  } catch {
    // too large for the store, or an older store: the image still goes inline
    return undefined;
  }
}
