import { ArrowRight, ExternalLink, X } from 'lucide-react';
import type { ReactNode } from 'react';
import { IconButton } from '../ui/button.tsx';
import { DefinitionList } from '../ui/card.tsx';
import { JsonView } from '../ui/json-view.tsx';
import type { FlowGraph, FlowNodeData } from './flow-graph.ts';
import { KIND_VISUAL, methodColor } from './flow-node-visual.ts';

/** Click a node for details (seed 2.8): what it is, what feeds it, what it feeds, where to go next. */
export function FlowDetail({
  graph,
  nodeId,
  onSelect,
  onClose,
}: {
  graph: FlowGraph;
  nodeId: string;
  onSelect: (id: string) => void;
  onClose: () => void;
}) {
  const node = graph.nodes.find((n) => n.id === nodeId);
  if (!node) return null;
  const d = node.data;
  const visual = KIND_VISUAL[d.kind];
  const Icon = visual.icon;
  const color = d.kind === 'http' ? methodColor(d.method) : visual.color;
  const label = (id: string) => graph.nodes.find((n) => n.id === id)?.data;
  const incoming = graph.edges.filter((e) => e.target === nodeId);
  const outgoing = graph.edges.filter((e) => e.source === nodeId);
  const facts: Array<[ReactNode, ReactNode]> = [['Type', visual.caption]];
  if (d.kind === 'http') facts.push(['Route', `${d.method} ${d.label}`]);
  if (d.kind === 'cron') facts.push(['Schedule', <code key="c">{d.label}</code>]);
  if (d.trigger) {
    facts.push(['Trigger id', <code key="t">{d.trigger.id}</code>]);
    facts.push(['Status', d.trigger.status]);
  }
  if (d.fn) {
    facts.push(['Worker', d.fn.worker_name]);
    if (d.fn.description) facts.push(['Description', d.fn.description]);
  }
  if (d.unnamed) facts.push(['Name', 'not recorded: the spans of these calls carry no scope or queue name; declare it in metadata.uses']);

  const fnId = d.kind === 'function' ? d.functionId : undefined;
  const links: Array<{ href: string; text: string }> = [];
  if (fnId) {
    links.push({ href: `#/functions?fn=${encodeURIComponent(fnId)}`, text: 'Open in Functions' });
    links.push({ href: `#/traces?op=${encodeURIComponent(fnId)}`, text: 'Traces of this function' });
  }
  if (d.trigger) links.push({ href: `#/triggers?id=${encodeURIComponent(d.trigger.id)}`, text: 'Open in Triggers' });
  if (d.kind === 'state' && !d.unnamed)
    links.push({ href: `#/states?scope=${encodeURIComponent(d.label)}`, text: 'Browse this scope in States' });
  if (d.kind === 'queue' && !d.unnamed) links.push({ href: `#/queues?topic=${encodeURIComponent(d.label)}`, text: 'Open in Queues' });

  return (
    <aside
      className="flex h-full w-80 shrink-0 flex-col border-l border-line bg-surface"
      aria-label="Node detail"
      data-testid="flow-detail"
    >
      <header className="flex items-start gap-2.5 border-b border-line p-3">
        <span
          className="flex size-9 shrink-0 items-center justify-center rounded-lg"
          style={{ color, background: `color-mix(in srgb, ${color} 14%, transparent)` }}
        >
          <Icon size={17} />
        </span>
        <div className="min-w-0 flex-1">
          <h2 className="truncate font-mono text-[13px] font-semibold text-fg" title={d.label}>
            {d.kind === 'http' ? `${d.method} ${d.label}` : d.label}
          </h2>
          <p className="text-xs text-muted">{visual.caption}</p>
        </div>
        <IconButton icon={X} label="Close node detail" onClick={onClose} />
      </header>
      <div className="min-h-0 flex-1 space-y-4 overflow-auto p-3">
        <DefinitionList items={facts} />
        <Relations title="Fed by" ids={incoming.map((e) => ({ id: e.source, note: e.label }))} label={label} onSelect={onSelect} />
        <Relations
          title="Leads to"
          ids={outgoing.map((e) => ({ id: e.target, note: e.kind === 'observed' ? 'seen in traces' : e.label }))}
          label={label}
          onSelect={onSelect}
        />
        {d.trigger ? <JsonView value={d.trigger.config} label="trigger config" maxHeight={200} /> : null}
        {d.fn?.metadata ? <JsonView value={d.fn.metadata} label="function metadata" maxHeight={200} /> : null}
        {links.length > 0 ? (
          <ul className="space-y-1">
            {links.map((l) => (
              <li key={l.href}>
                <a href={l.href} className="inline-flex items-center gap-1.5 text-[13px] text-accent hover:underline">
                  <ExternalLink size={13} /> {l.text}
                </a>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </aside>
  );
}

function Relations({
  title,
  ids,
  label,
  onSelect,
}: {
  title: string;
  ids: Array<{ id: string; note?: string }>;
  label: (id: string) => FlowNodeData | undefined;
  onSelect: (id: string) => void;
}) {
  if (ids.length === 0) return null;
  return (
    <section>
      <h3 className="mb-1 text-[11px] font-semibold tracking-wide text-faint uppercase">{title}</h3>
      <ul className="space-y-0.5">
        {ids.map(({ id, note }) => {
          const d = label(id);
          if (!d) return null;
          const Icon = KIND_VISUAL[d.kind].icon;
          return (
            <li key={id}>
              <button
                type="button"
                onClick={() => onSelect(id)}
                className="flex w-full cursor-pointer items-center gap-2 rounded-md px-1.5 py-1 text-left text-[12.5px] hover:bg-surface-2"
              >
                <Icon size={13} className="shrink-0 text-muted" />
                <span className="truncate font-mono">{d.kind === 'http' ? `${d.method} ${d.label}` : d.label}</span>
                {note ? (
                  <span className="ml-auto shrink-0 text-[11px] text-faint">{note}</span>
                ) : (
                  <ArrowRight size={12} className="ml-auto shrink-0 text-faint" />
                )}
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
