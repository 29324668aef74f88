import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { editAndResend, regenerateAnswer, type TurnSettings } from '../../api/chat-turns.ts';
import { useChatPrefs } from '../../lib/chat/prefs.ts';
import type { Block } from '../../lib/chat/transcript.ts';
import { useChatModel } from './use-chat-model.ts';

/**
 * What the transcript's message actions do (issue 25 item 4): Retry / Regenerate answer the last
 * user message again (harness::regenerate), Edit replaces it (harness::edit), both with the model,
 * effort, mode and working directory the composer would send with. One action runs at a time; its
 * failure is shown beside the control that started it (`at`).
 */

export interface TurnActions {
  /** Answer the last user message again; `at` names the control (its error is shown there). */
  regenerate(at: string): Promise<void>;
  /** Replace the last user message `entryId` with `content` and answer it; false when it failed. */
  edit(entryId: string, content: Block[]): Promise<boolean>;
  /** The control whose action is in flight. */
  busy?: string;
  error?: { at: string; message: string };
  /** A provider's display name (OpenAI for `openai`). */
  providerLabel(provider: string): string;
}

const TurnActionsContext = createContext<TurnActions | null>(null);

export function useTurnActions(): TurnActions | null {
  return useContext(TurnActionsContext);
}

/** The last user message of the conversation, as the transcript shows it (regenerate answers it). */
export function TurnActionsProvider({
  sessionId,
  lastUserEntry,
  children,
}: {
  sessionId: string;
  lastUserEntry: string | undefined;
  children: ReactNode;
}) {
  const model = useChatModel();
  const prefs = useChatPrefs();
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<TurnActions['error']>();

  const settings = useCallback((): TurnSettings => {
    if (!model.selected) throw new Error('no model: pick one in the model picker');
    return { sessionId, model: model.selected, effort: prefs.effort, mode: prefs.mode, fsRoot: prefs.workingDirs[sessionId] };
  }, [sessionId, model.selected, prefs.effort, prefs.mode, prefs.workingDirs]);

  const run = useCallback(async (at: string, action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(at);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (err) {
      setError({ at, message: (err as Error).message ?? String(err) });
      return false;
    } finally {
      setBusy(undefined);
    }
  }, []);

  const value = useMemo<TurnActions>(() => {
    const labels = new Map(model.groups.map((g) => [g.provider, g.label]));
    return {
      busy,
      error,
      providerLabel: (provider) => labels.get(provider) ?? provider,
      async regenerate(at) {
        await run(at, async () => {
          if (!lastUserEntry) throw new Error('there is no message to answer again');
          await regenerateAnswer({ ...settings(), userEntryId: lastUserEntry });
        });
      },
      edit(entryId, content) {
        const key = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
        return run(`edit:${entryId}`, () => editAndResend({ ...settings(), entryId, content, idempotencyKey: key }));
      },
    };
  }, [busy, error, model.groups, run, settings, lastUserEntry]);

  return <TurnActionsContext.Provider value={value}>{children}</TurnActionsContext.Provider>;
}

/** Put text on the clipboard; pages the Clipboard API refuses fall back to a selected textarea. */
export async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      return await navigator.clipboard.writeText(text);
    } catch {
      // denied (no permission, not focused): the older way below
    }
  }
  const area = Object.assign(document.createElement('textarea'), { value: text });
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('the browser refused to copy');
}
