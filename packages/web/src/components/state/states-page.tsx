import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Database, Plus, RefreshCw } from 'lucide-react';
import { useState } from 'react';
import { stateKeys, useAllStateItems, useStateGroups, useStateLiveRefresh } from '../../api/state.ts';
import { formatCount } from '../../lib/format.ts';
import { isTyping, useKeydown } from '../../lib/keyboard.ts';
import { Badge } from '../ui/badge.tsx';
import { Button, IconButton } from '../ui/button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { SearchInput, Select, Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { GroupList } from './group-list.tsx';
import { ItemDetail } from './item-detail.tsx';
import { type EditorMode, ItemEditor } from './item-editor.tsx';
import { FilteredStateItems, PagedStateItems } from './items-table.tsx';

const route = getRouteApi('/states');

/** States (seed 2.4): groups → items with their real keys → detail, with Add / Edit / confirmed Delete. */
export function StatesPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const qc = useQueryClient();
  const groups = useStateGroups();
  const [editor, setEditor] = useState<EditorMode | null>(null);
  const [shown, setShown] = useState<number | undefined>();
  useStateLiveRefresh();
  // Esc closes the detail sidebar (console spec §4 Global UX); dialogs take Esc first
  useKeydown((e) => {
    if (e.key === 'Escape' && !editor && !isTyping(e.target) && search.key !== undefined) set({ key: undefined });
  });

  const scope = search.scope ?? groups.data?.[0]?.scope;
  const query = search.q ?? '';
  const contains = search.contains === true;
  const group = groups.data?.find((g) => g.scope === scope);
  const all = useAllStateItems(scope, contains && query !== '');

  const set = (patch: Partial<typeof search>, replace = false) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace });

  // a new search or group: forget the previous match count until the table reports one
  const searchKey = `${scope}\u0000${query}\u0000${contains}`;
  const [countFor, setCountFor] = useState(searchKey);
  if (countFor !== searchKey) {
    setCountFor(searchKey);
    setShown(undefined);
  }

  return (
    <div className="flex h-full min-h-0 flex-col">
      <PageHeader
        title="States"
        description="The key-value state store: groups (scopes), their items by key, and the JSON value of each."
        actions={
          <>
            <IconButton
              icon={RefreshCw}
              label="Refresh"
              onClick={() => void qc.invalidateQueries({ queryKey: stateKeys.all })}
              className={groups.isFetching ? 'animate-spin' : undefined}
            />
            <Button variant="primary" size="sm" icon={Plus} onClick={() => setEditor({ kind: 'add', scope })} data-testid="state-add">
              Add item
            </Button>
          </>
        }
      />
      <div className="relative grid min-h-0 flex-1 grid-cols-1 md:grid-cols-[220px_minmax(0,1fr)] xl:grid-cols-[240px_minmax(0,1fr)_auto]">
        <GroupList
          className="max-md:hidden"
          groups={groups.data}
          loading={groups.isPending}
          error={groups.error}
          selected={scope}
          onSelect={(s) => set({ scope: s, key: undefined, q: undefined })}
        />
        <section aria-label="Items" className="flex min-h-0 min-w-0 flex-col">
          {scope ? (
            <>
              <div className="flex flex-wrap items-center gap-3 border-b border-line px-4 py-2.5">
                <h2 className="font-mono text-[14px] font-semibold text-fg max-md:hidden">{scope}</h2>
                <Select
                  aria-label="Group"
                  className="w-40 font-mono md:hidden"
                  value={scope}
                  onChange={(e) => set({ scope: e.target.value, key: undefined, q: undefined })}
                >
                  {(groups.data ?? []).map((g) => (
                    <option key={g.scope} value={g.scope}>
                      {g.scope}
                    </option>
                  ))}
                </Select>
                <Badge>{group?.count === undefined ? '…' : `${formatCount(group.count)} ${group.count === 1 ? 'key' : 'keys'}`}</Badge>
                <SearchInput
                  className="w-full sm:ml-auto sm:w-72"
                  value={query}
                  onChange={(q) => set({ q: q || undefined, key: undefined }, true)}
                  placeholder={contains ? 'Search keys (contains)…' : 'Search keys (starts with)…'}
                />
                <Toggle
                  checked={contains}
                  onChange={(v) => set({ contains: v || undefined }, true)}
                  label="Contains"
                  title="Off: keys starting with the text, matched on the server (fast for huge groups). On: keys containing it, matched in the browser."
                />
                <span className="text-right text-[12px] text-faint tabular-nums sm:w-28" data-testid="state-match-count">
                  {query && shown !== undefined ? `${formatCount(shown)} matching` : ''}
                </span>
              </div>
              {contains && query ? (
                all.isPending ? (
                  <div className="flex items-center gap-2 px-4 py-6 text-[13px] text-muted">
                    <Spinner /> Loading every key of {scope}…
                  </div>
                ) : all.error ? (
                  <ErrorNote title="Could not load the keys" error={all.error} className="m-4" />
                ) : (
                  <>
                    {all.data?.truncated ? (
                      <p className="border-b border-line bg-warn-soft px-4 py-1.5 text-[12px] text-warn">
                        Searching the first {formatCount(all.data.items.length)} of {formatCount(all.data.total)} keys; turn off Contains to
                        search all of them by prefix.
                      </p>
                    ) : null}
                    <FilteredStateItems
                      items={all.data?.items ?? []}
                      query={query}
                      selectedKey={search.key}
                      onSelect={(key) => set({ key })}
                      onCount={setShown}
                    />
                  </>
                )
              ) : (
                <PagedStateItems
                  scope={scope}
                  prefix={query}
                  selectedKey={search.key}
                  onSelect={(key) => set({ key })}
                  onCount={setShown}
                />
              )}
            </>
          ) : groups.isPending ? null : (
            <EmptyState icon={Database} title="The state store is empty">
              Workers write state with <code className="text-fg">state::set</code>. Use <b>Add item</b> to create the first group and key by
              hand.
            </EmptyState>
          )}
        </section>
        {scope && search.key !== undefined ? (
          <div className="contents xl:flex xl:min-h-0 xl:w-[400px] 2xl:w-[460px]">
            <ItemDetail
              key={`${scope}\u0000${search.key}`}
              scope={scope}
              itemKey={search.key}
              onClose={() => set({ key: undefined })}
              onEdit={(value) => setEditor({ kind: 'edit', scope, key: search.key as string, value })}
              onDeleted={() => set({ key: undefined })}
            />
          </div>
        ) : null}
      </div>
      <ItemEditor mode={editor} onClose={() => setEditor(null)} onSaved={(s, key) => set({ scope: s, key })} />
    </div>
  );
}
