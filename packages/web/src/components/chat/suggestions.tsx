import { AtSign, Slash } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { type CatalogEntry, useFunctionMentions } from '../../api/functions-catalog.ts';
import { cn } from '../ui/cn.ts';
import { Spinner } from '../ui/spinner.tsx';

/**
 * The composer's pop-up lists: @-mentions (fuzzy search over every registered function, from the
 * catalog cached for VITE_FUNCTIONS_LIST_CACHE_MS) and slash commands. The composer owns the
 * keyboard (↑ ↓ move, Enter / Tab pick, Esc close); these only render.
 */

export interface Trigger {
  kind: '@' | '/';
  query: string;
  /** Where the trigger character is in the text. */
  start: number;
}

/** The `@word` or leading `/word` the caret is in, if any. */
export function triggerAt(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  const mention = /(^|\s)@([\w.:-]*)$/.exec(before);
  if (mention) return { kind: '@', query: mention[2] ?? '', start: caret - (mention[2]?.length ?? 0) - 1 };
  const slash = /^\/([\w-]*)$/.exec(before);
  if (slash) return { kind: '/', query: slash[1] ?? '', start: 0 };
  return undefined;
}

export const COMMANDS = [{ name: 'compact', description: 'Summarise the conversation so far; later turns start from the summary' }];

export function commandMatches(query: string) {
  return COMMANDS.filter((c) => c.name.startsWith(query.toLowerCase()));
}

export function useMentionMatches(trigger: Trigger | undefined): { matches: CatalogEntry[]; loading: boolean } {
  return useFunctionMentions(trigger?.kind === '@' ? trigger.query : '', 12);
}

export function SuggestionList({
  trigger,
  mentions,
  loading,
  active,
  onPick,
}: {
  trigger: Trigger;
  mentions: CatalogEntry[];
  loading: boolean;
  active: number;
  onPick: (index: number) => void;
}) {
  const list = useRef<HTMLDivElement>(null);
  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${active}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);
  const commands = trigger.kind === '/' ? commandMatches(trigger.query) : [];
  const rows =
    trigger.kind === '@'
      ? mentions.map((m) => ({ id: m.function_id, label: m.function_id, detail: m.description ?? '' }))
      : commands.map((c) => ({ id: c.name, label: `/${c.name}`, detail: c.description }));
  return (
    <div
      className="absolute right-0 bottom-full left-0 z-20 mb-2 overflow-hidden rounded-lg border border-line bg-surface shadow-pop"
      data-testid={trigger.kind === '@' ? 'mention-menu' : 'command-menu'}
    >
      <div className="flex items-center gap-1.5 border-b border-line px-3 py-1.5 text-[11px] text-faint">
        {trigger.kind === '@' ? <AtSign size={12} /> : <Slash size={12} />}
        {trigger.kind === '@' ? 'Mention a function' : 'Commands'}
        <span className="flex-1" />
        <span>↑↓ to move · Enter to pick · Esc to close</span>
      </div>
      {rows.length === 0 ? (
        <div className="flex items-center gap-2 px-3 py-2.5 text-[13px] text-muted">
          {loading ? <Spinner size={12} /> : null}
          {loading ? 'Loading functions…' : trigger.kind === '@' ? `No function matches “${trigger.query}”` : 'No such command'}
        </div>
      ) : (
        <div ref={list} role="listbox" className="max-h-64 overflow-y-auto py-1">
          {rows.map((row, i) => (
            <div
              key={row.id}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              data-index={i}
              data-testid="suggestion"
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => onPick(i)}
              onKeyDown={() => undefined}
              className={cn(
                'flex cursor-pointer items-baseline gap-2 px-3 py-1.5 text-[13px]',
                i === active ? 'bg-accent-soft text-fg' : 'text-muted hover:bg-surface-2',
              )}
            >
              <span className="shrink-0 font-mono text-[12.5px] text-fg">{row.label}</span>
              <span className="truncate text-xs">{row.detail}</span>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
