import { Boxes, Search } from 'lucide-react';
import { useState } from 'react';
import { useStreamItem, useStreamItems } from '../../api/streams.ts';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { TextInput } from '../ui/inputs.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { preview } from './monitor-messages.tsx';

function ownId(value: unknown): string | undefined {
  const id = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

/** Stored items of one stream group (`stream::list`), plus a lookup of one item by id (`stream::get`). */
export function StreamItems({ stream, group }: { stream: string | undefined; group: string | undefined }) {
  const items = useStreamItems(stream, group);
  const [selected, setSelected] = useState<number | undefined>();
  const [lookup, setLookup] = useState('');
  const [asked, setAsked] = useState<string | undefined>();
  const one = useStreamItem(stream, group, asked);

  if (!stream || group === undefined) {
    return (
      <EmptyState icon={Boxes} title="Pick a stream group">
        Choose a row on the left to browse the items stored in that group.
      </EmptyState>
    );
  }
  const list = items.data ?? [];
  const detail = selected === undefined ? undefined : list[selected];
  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <div className="flex flex-wrap items-center gap-2 border-b border-line px-3 py-2">
        <span className="font-mono text-[13px] font-semibold text-fg">
          {stream} <span className="text-faint">/</span> {group}
        </span>
        <span className="text-[12px] text-faint" data-testid="stream-items-count">
          {items.data ? `${list.length} ${list.length === 1 ? 'item' : 'items'}` : ''}
        </span>
        <form
          className="ml-auto flex items-center gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            setAsked(lookup.trim() || undefined);
          }}
        >
          <TextInput
            value={lookup}
            onChange={(e) => setLookup(e.target.value)}
            placeholder="item id"
            aria-label="Item id"
            className="h-7! w-44 font-mono text-[12px]"
          />
          <Button size="sm" type="submit" icon={Search} disabled={!lookup.trim()}>
            Get
          </Button>
        </form>
      </div>
      {asked ? (
        <div className="border-b border-line bg-surface-2/50 px-3 py-2" data-testid="stream-item-lookup">
          {one.isPending ? (
            <span className="inline-flex items-center gap-2 text-[12.5px] text-muted">
              <Spinner /> stream::get {asked}…
            </span>
          ) : one.error ? (
            <ErrorNote title="stream::get failed" error={one.error} />
          ) : one.data?.found ? (
            <JsonView value={one.data.value} maxHeight={240} label="item" />
          ) : (
            <p className="text-[12.5px] text-muted">
              No item <b className="font-mono">{asked}</b> in this group.
            </p>
          )}
        </div>
      ) : null}
      <div className="flex min-h-0 flex-1">
        <ul className="min-h-0 flex-1 overflow-y-auto" data-testid="stream-items">
          {items.error ? <ErrorNote title="stream::list failed" error={items.error} className="m-3" /> : null}
          {items.isPending ? (
            <li className="flex items-center gap-2 px-3 py-4 text-[13px] text-muted">
              <Spinner /> Loading items…
            </li>
          ) : null}
          {items.data && list.length === 0 ? (
            <li>
              <EmptyState title="This group holds no items" compact>
                Items appear when a worker calls <code className="text-fg">stream::set</code>.
              </EmptyState>
            </li>
          ) : null}
          {list.map((value, i) => {
            const id = ownId(value);
            return (
              <li key={id ?? i}>
                <button
                  type="button"
                  onClick={() => setSelected(i === selected ? undefined : i)}
                  className={cn(
                    'grid w-full cursor-pointer grid-cols-[minmax(120px,220px)_minmax(0,1fr)] gap-3 border-b border-line/60 px-3 py-1.5 text-left text-[12px]',
                    i === selected ? 'bg-accent-soft' : 'hover:bg-surface-2',
                  )}
                  data-testid="stream-item"
                >
                  <span
                    className={cn('truncate font-mono', id ? 'text-fg' : 'text-faint italic')}
                    title={id ?? 'the value has no id field'}
                  >
                    {id ?? `#${i + 1}`}
                  </span>
                  <span className="truncate font-mono text-muted">{preview(value)}</span>
                </button>
              </li>
            );
          })}
        </ul>
        {detail !== undefined ? (
          <aside className="w-[380px] shrink-0 overflow-y-auto border-l border-line p-3 max-xl:hidden" aria-label="Item detail">
            <JsonView value={detail} maxHeight={10_000} label="item" />
          </aside>
        ) : null}
      </div>
    </div>
  );
}
