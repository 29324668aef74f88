import { effortOptions, type Model } from '../lib/chat/models.ts';
import type { ChatMode } from '../lib/chat/prefs.ts';
import { type Block, contextOf, type Entry } from '../lib/chat/transcript.ts';
import { noteOwnDecision } from './chat-calls.ts';
import { CONSOLE_METADATA } from './chat-sessions.ts';
import { callEngine } from './client.ts';

/**
 * What the composer and the cards do (console-worker.md §2.3, §2.6, §2.7): start a turn with
 * `harness::send`, stop it with `harness::stop`, decide held calls with `approval::resolve`, and
 * /compact through `context::compact` plus the `compaction` custom entry.
 */

export interface SendInput {
  sessionId: string;
  content: Block[];
  model: Model;
  effort?: string;
  mode: ChatMode;
  /** Also the user entry's id: `e_idem_<key>`. */
  idempotencyKey: string;
  /** The conversation's working directory (the worktrees surface sets it). */
  fsRoot?: string;
}

export interface SendAnswer {
  session_id: string;
  turn_id: string;
  accepted: boolean;
  merged?: boolean;
  queued?: boolean;
  deduplicated?: boolean;
}

/** `e_idem_<key with anything but [A-Za-z0-9_-] replaced by _>` (§2.3). */
export function idempotentEntryId(key: string): string {
  return `e_idem_${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function sendMessage(input: SendInput): Promise<SendAnswer> {
  const onlyText = input.content.length === 1 && input.content[0]?.type === 'text';
  const message = onlyText ? (input.content[0] as { text: string }).text : { role: 'user', content: input.content, timestamp: Date.now() };
  return callEngine<SendAnswer>(
    'harness::send',
    {
      session_id: input.sessionId,
      message,
      model: input.model.id,
      provider: input.model.provider,
      idempotency_key: input.idempotencyKey,
      session: { metadata: CONSOLE_METADATA },
      options: {
        mode: input.mode,
        ...effortOptions(input.model, input.effort),
        metadata: {
          session_id: input.sessionId,
          message_id: idempotentEntryId(input.idempotencyKey),
          surface: 'console',
          ...(input.fsRoot ? { fs_scope: { root: input.fsRoot } } : {}),
        },
      },
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
  // the card shows who decided and how (issue 25 item 3)
  if (res.resolved) noteOwnDecision(input.sessionId, input.callId, input);
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
