import { Database, FolderOpen } from 'lucide-react';
import { useMemo, useState } from 'react';
import type { StateGroup } from '../../api/state.ts';
import { formatCount } from '../../lib/format.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';

/** The scopes of the state store with their key counts (the reference console always showed 0). */
export function GroupList({
  groups,
  loading,
  error,
  selected,
  onSelect,
  className,
}: {
  className?: string;
  groups: StateGroup[] | undefined;
  loading: boolean;
  error: unknown;
  selected: string | undefined;
  onSelect: (scope: string) => void;
}) {
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return (groups ?? []).filter((g) => !q || g.scope.toLowerCase().includes(q));
  }, [groups, filter]);

  return (
    <aside aria-label="State groups" className={cn('flex min-h-0 flex-col border-r border-line bg-surface', className)}>
      <div className="flex items-center justify-between gap-2 px-3 pt-3 pb-2">
        <h2 className="text-[11px] font-semibold tracking-wider text-faint uppercase">Groups</h2>
        <span className="text-[11px] text-faint tabular-nums">{groups ? groups.length : ''}</span>
      </div>
      <div className="px-3 pb-2">
        <input
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          placeholder="Filter groups"
          aria-label="Filter groups"
          className="h-7 w-full rounded-md border border-line bg-surface-2 px-2 text-[12.5px] text-fg outline-none placeholder:text-faint focus:border-accent"
        />
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto px-2 pb-3" data-testid="state-groups">
        {error && (error as { code?: string }).code === 'function_not_found' ? (
          <EmptyState icon={Database} title="No state store" compact>
            This engine runs without the state module. Add <code className="text-fg">eng-state</code> to its config.yaml.
          </EmptyState>
        ) : error ? (
          <ErrorNote title="Could not list the groups" error={error} className="mx-1" />
        ) : null}
        {loading ? <LoadingNote what="state groups" className="justify-start px-2 py-3" /> : null}
        {!loading && !error && groups?.length === 0 ? (
          <EmptyState icon={Database} title="No state yet" compact>
            Groups appear when a worker calls <code className="text-fg">state::set</code>, or add an item with the button above.
          </EmptyState>
        ) : null}
        {!loading && groups && groups.length > 0 && shown.length === 0 ? (
          <p className="px-2 py-3 text-[13px] text-muted">No group matches “{filter}”.</p>
        ) : null}
        <ul className="space-y-0.5">
          {shown.map((g) => {
            const active = g.scope === selected;
            return (
              <li key={g.scope}>
                <button
                  type="button"
                  data-testid="state-group"
                  data-scope={g.scope}
                  aria-current={active ? 'true' : undefined}
                  onClick={() => onSelect(g.scope)}
                  className={cn(
                    'flex h-8 w-full cursor-pointer items-center gap-2 rounded-md px-2 text-left text-[13px] transition-colors',
                    active ? 'bg-accent-soft text-fg' : 'text-muted hover:bg-surface-2 hover:text-fg',
                  )}
                >
                  <FolderOpen size={14} className={active ? 'text-accent' : 'text-faint'} />
                  <span className="min-w-0 flex-1 truncate font-mono text-[12.5px]">{g.scope}</span>
                  <span
                    data-testid="state-group-count"
                    className={cn('text-[11px] tabular-nums', active ? 'font-semibold text-accent' : 'text-faint')}
                    title={g.count === undefined ? 'count unavailable' : `${g.count} ${g.count === 1 ? 'key' : 'keys'}`}
                  >
                    {g.count === undefined ? '–' : formatCount(g.count)}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      </div>
    </aside>
  );
}
