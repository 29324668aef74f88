import { useNavigate } from '@tanstack/react-router';
import { Activity, CornerDownLeft, Database, Inbox, Keyboard, type LucideIcon, Moon, Search, SquareFunction, Zap } from 'lucide-react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useFlowEnabled } from '../../api/console-config.ts';
import { isSystemFunction, useFunctions } from '../../api/functions.ts';
import { TRACE_ID_PREFIX, usePaletteSources } from '../../api/palette.ts';
import { usePresence } from '../../api/presence.ts';
import { useTriggers } from '../../api/triggers.ts';
import { pluralize } from '../../lib/format.ts';
import { matchScore } from '../../lib/fuzzy.ts';
import { toggleTheme } from '../../lib/theme.ts';
import { summarise } from '../../lib/trigger-config.ts';
import { PAGES } from '../../pages.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { Dialog } from '../ui/dialog.tsx';
import { Kbd } from '../ui/kbd.tsx';

interface Item {
  id: string;
  group: 'Pages' | 'Functions' | 'Triggers' | 'Queues' | 'State groups' | 'Traces' | 'Actions';
  label: string;
  hint?: string;
  icon: LucideIcon;
  shortcut?: string;
  run: () => void;
  score: number;
}

const PER_GROUP = 8;

const ORDER: Item['group'][] = ['Pages', 'Functions', 'Triggers', 'Queues', 'State groups', 'Traces', 'Actions'];

/**
 * ⌘K: pages, functions and triggers in one list (console spec §4 Global UX, without its cache-key
 * bug §7.7); with a query, queues and topics, state groups and trace ids too (issue 19 §11).
 */
export function CommandPalette({ open, onClose, onShowShortcuts }: { open: boolean; onClose: () => void; onShowShortcuts: () => void }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const navigate = useNavigate();
  const flowEnabled = useFlowEnabled();
  const presence = usePresence();
  const functions = useFunctions();
  const triggers = useTriggers();
  const sources = usePaletteSources(open);
  const listRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (open) {
      setQuery('');
      setActive(0);
    }
  }, [open]);

  const items = useMemo(() => {
    const close = (fn: () => void) => () => {
      onClose();
      fn();
    };
    const out: Item[] = [];
    for (const page of PAGES) {
      if ((page.flowOnly && !flowEnabled) || (page.presence && !presence[page.presence])) continue;
      const score = matchScore(query, page.label, page.description);
      if (score < 0) continue;
      out.push({
        id: `page:${page.path}`,
        group: 'Pages',
        label: page.label,
        hint: page.description,
        icon: page.icon,
        shortcut: `g ${page.key}`,
        score,
        run: close(() => void navigate({ to: page.path })),
      });
    }
    const fns = (functions.data ?? [])
      .filter((f) => query || !isSystemFunction(f))
      .map((f) => ({ f, score: matchScore(query, f.function_id, f.description ?? '') }))
      .filter((x) => x.score >= 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, PER_GROUP);
    for (const { f, score } of fns) {
      out.push({
        id: `fn:${f.function_id}`,
        group: 'Functions',
        label: f.function_id,
        hint: f.description ?? undefined,
        icon: SquareFunction,
        score,
        run: close(() => void navigate({ to: '/functions', search: { fn: f.function_id } })),
      });
    }
    const trs = (triggers.data ?? [])
      .map((t) => ({ t, summary: summarise(t.trigger_type, t.config, t.config_summary) }))
      .map(({ t, summary }) => ({ t, summary, score: matchScore(query, `${t.trigger_type} ${summary}`, t.function_id) }))
      .filter((x) => x.score >= 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, PER_GROUP);
    for (const { t, summary, score } of trs) {
      out.push({
        id: `tr:${t.id}`,
        group: 'Triggers',
        label: `${t.trigger_type} · ${summary}`,
        hint: `→ ${t.function_id}`,
        icon: Zap,
        score,
        run: close(() => void navigate({ to: '/triggers', search: { id: t.id } })),
      });
    }
    // names the user may remember: only once something is typed, best matches first
    const q = query.trim();
    if (q) {
      const queues = sources.queues
        .map((t) => ({ t, score: matchScore(q, t.name, t.kinds.join(' ')) }))
        .filter((x) => x.score >= 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, PER_GROUP);
      for (const { t, score } of queues) {
        out.push({
          id: `queue:${t.name}`,
          group: 'Queues',
          label: t.name,
          hint: `${t.kinds.map((k) => (k === 'topic' ? 'topic' : 'queue')).join(' + ')}${t.dlq_count ? ` · ${pluralize(t.dlq_count, 'dead letter')}` : ''}`,
          icon: Inbox,
          score,
          run: close(() => void navigate({ to: '/queues', search: { topic: t.name } })),
        });
      }
      const scopes = sources.scopes
        .map((scope) => ({ scope, score: matchScore(q, scope) }))
        .filter((x) => x.score >= 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, PER_GROUP);
      for (const { scope, score } of scopes) {
        out.push({
          id: `scope:${scope}`,
          group: 'State groups',
          label: scope,
          hint: 'state group',
          icon: Database,
          score,
          run: close(() => void navigate({ to: '/states', search: { scope } })),
        });
      }
      if (TRACE_ID_PREFIX.test(q)) {
        const id = q.toLowerCase();
        const known = sources.traces.filter((t) => t.trace_id.startsWith(id)).slice(0, PER_GROUP);
        for (const t of known) {
          out.push({
            id: `trace:${t.trace_id}`,
            group: 'Traces',
            label: t.trace_id,
            hint: t.name,
            icon: Activity,
            score: 1,
            run: close(() => void navigate({ to: '/traces', search: { trace_id: t.trace_id } })),
          });
        }
        // a whole id the recent list does not hold still opens
        if (id.length === 32 && !known.some((t) => t.trace_id === id)) {
          out.push({
            id: `trace:${id}`,
            group: 'Traces',
            label: id,
            hint: 'open this trace id',
            icon: Activity,
            score: 1,
            run: close(() => void navigate({ to: '/traces', search: { trace_id: id } })),
          });
        }
      }
    }
    const actions: Array<Omit<Item, 'score'>> = [
      { id: 'act:theme', group: 'Actions', label: 'Toggle light / dark theme', icon: Moon, shortcut: 't', run: close(toggleTheme) },
      { id: 'act:keys', group: 'Actions', label: 'Show keyboard shortcuts', icon: Keyboard, shortcut: '?', run: close(onShowShortcuts) },
    ];
    for (const a of actions) {
      const score = matchScore(query, a.label);
      if (score >= 0) out.push({ ...a, score });
    }
    // best match first within each group; groups keep their order
    return out.sort((a, b) => ORDER.indexOf(a.group) - ORDER.indexOf(b.group) || b.score - a.score);
  }, [query, functions.data, triggers.data, sources, flowEnabled, presence, navigate, onClose, onShowShortcuts]);

  useEffect(() => {
    if (active >= items.length) setActive(Math.max(0, items.length - 1));
  }, [items.length, active]);
  useEffect(() => {
    listRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  let lastGroup = '';
  return (
    <Dialog open={open} onClose={onClose} className="max-w-xl overflow-hidden" labelledBy="palette-title">
      <h2 id="palette-title" className="sr-only">
        Command palette
      </h2>
      <div className="flex items-center gap-2 border-b border-line px-3">
        <Search size={16} className="text-faint" />
        <input
          autoFocus
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setActive((i) => Math.min(items.length - 1, i + 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive((i) => Math.max(0, i - 1));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              items[active]?.run();
            }
          }}
          placeholder="Jump to a page, function, trigger, queue, state group or trace id…"
          aria-label="Command palette search"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          className="h-12 flex-1 bg-transparent text-[14px] text-fg outline-none placeholder:text-faint"
        />
        <Kbd keys="escape" />
      </div>
      <div ref={listRef} id="palette-list" role="listbox" className="max-h-[55vh] overflow-y-auto p-1.5">
        {items.length === 0 ? <p className="px-3 py-8 text-center text-[13px] text-muted">Nothing matches “{query}”.</p> : null}
        {items.map((item, index) => {
          const header = item.group !== lastGroup ? item.group : null;
          lastGroup = item.group;
          const Icon = item.icon;
          return (
            <div key={item.id}>
              {header ? (
                <div className="px-2.5 pt-2 pb-1 text-[10.5px] font-semibold tracking-wider text-faint uppercase">{header}</div>
              ) : null}
              <div
                role="option"
                tabIndex={-1}
                aria-selected={index === active}
                data-index={index}
                onMouseMove={() => setActive(index)}
                onClick={item.run}
                onKeyDown={() => undefined}
                className={cn('flex cursor-pointer items-center gap-3 rounded-lg px-2.5 py-2', index === active ? 'bg-accent-soft' : '')}
              >
                <Icon size={15} className={index === active ? 'text-accent' : 'text-faint'} />
                <div className="min-w-0 flex-1">
                  <div
                    className={cn(
                      'truncate text-[13px] font-medium',
                      item.group === 'Pages' || item.group === 'Actions' ? '' : 'font-mono text-[12.5px]',
                    )}
                  >
                    {item.label}
                  </div>
                  {item.hint ? <div className="truncate text-[11.5px] text-muted">{item.hint}</div> : null}
                </div>
                {item.shortcut ? <Kbd keys={item.shortcut} /> : null}
                {index === active ? <CornerDownLeft size={13} className="text-faint" /> : null}
              </div>
            </div>
          );
        })}
      </div>
      <div className="flex items-center gap-3 border-t border-line px-3 py-2 text-[11.5px] text-faint">
        <span className="flex items-center gap-1">
          <Kbd keys="↑" /> <Kbd keys="↓" /> move
        </span>
        <span className="flex items-center gap-1">
          <Kbd keys="↵" /> open
        </span>
        {functions.isError ? <Badge tone="warn">functions unavailable</Badge> : null}
      </div>
    </Dialog>
  );
}
