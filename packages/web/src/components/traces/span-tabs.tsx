import type { UseQueryResult } from '@tanstack/react-query';
import { ArrowUpRight, Bug, FileText, Link2, Luggage, Sparkles } from 'lucide-react';
import { type ReactNode, useMemo, useState } from 'react';
import type { StoredLog, StoredSpan } from '../../api/traces.ts';
import { formatDuration, formatTime, pluralize } from '../../lib/format.ts';
import { Badge, type Tone } from '../ui/badge.tsx';
import { DefinitionList } from '../ui/card.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { SearchInput } from '../ui/inputs.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { attr, firstAttr, functionIdOf, groupAttributes, type SpanError, shortId, traceparentOf } from './span-facts.ts';
import type { SpanNode, TraceModel } from './trace-model.ts';

const Mono = ({ children }: { children: ReactNode }) => <span className="font-mono text-[12px] break-all">{children}</span>;

function IdRow({ value, label }: { value: string; label: string }) {
  return (
    <span className="inline-flex items-center gap-1">
      <Mono>{value}</Mono>
      <CopyButton text={value} label={`Copy ${label}`} />
    </span>
  );
}

export function InfoTab({ model, node, onSelect }: { model: TraceModel; node: SpanNode; onSelect: (id: string) => void }) {
  const span = node.span;
  const fn = functionIdOf(span);
  const items: Array<[ReactNode, ReactNode]> = [
    ['Name', span.name],
    ['Service', node.service],
    ...(fn ? ([['Function', <Mono key="fn">{fn}</Mono>]] as Array<[ReactNode, ReactNode]>) : []),
    ['Kind', span.kind ?? '—'],
    ['Status', `${span.pending ? 'pending' : span.status}${span.status_description ? ` — ${span.status_description}` : ''}`],
    ['Duration', `${formatDuration(node.durationMs)}${node.pending ? ' (so far)' : ''}`],
    ['Self time', formatDuration(node.selfMs)],
    ['Start', `${formatTime(node.startMs, true)} (+${formatDuration(node.startMs - model.startMs)} into the trace)`],
    ['Trace ID', <IdRow key="t" value={span.trace_id} label="trace id" />],
    ['Span ID', <IdRow key="s" value={span.span_id} label="span id" />],
    [
      'Parent',
      node.parent ? (
        <button
          key="p"
          type="button"
          className="cursor-pointer text-left text-accent hover:underline"
          onClick={() => onSelect(node.parent?.id as string)}
        >
          {node.parent.span.name} <span className="font-mono text-[11px]">({shortId(node.parent.id)})</span>
        </button>
      ) : span.parent_span_id ? (
        <span key="p" className="text-muted">
          <Mono>{span.parent_span_id}</Mono> — not in this trace's store (a remote or evicted parent)
        </span>
      ) : (
        'none (root span)'
      ),
    ],
    ['Children', String(node.children.length)],
  ];
  if (span.instrumentation_scope_name) {
    items.push([
      'Scope',
      `${span.instrumentation_scope_name}${span.instrumentation_scope_version ? ` ${span.instrumentation_scope_version}` : ''}`,
    ]);
  }
  return <DefinitionList items={items} />;
}

export function AttributesTab({ span }: { span: StoredSpan }) {
  const [find, setFind] = useState('');
  const needle = find.trim().toLowerCase();
  const groups = useMemo(
    () =>
      groupAttributes(span.attributes.filter(([k, v]) => !needle || k.toLowerCase().includes(needle) || v.toLowerCase().includes(needle))),
    [span.attributes, needle],
  );
  if (span.attributes.length === 0) return <EmptyState compact icon={FileText} title="No attributes on this span" />;
  return (
    <div className="space-y-3">
      <SearchInput value={find} onChange={setFind} placeholder="Filter attributes…" />
      {groups.map((group) => (
        <section key={group.namespace}>
          <h4 className="mb-1 text-[11px] font-semibold tracking-wide text-faint uppercase">{group.namespace}</h4>
          <dl className="divide-y divide-line rounded-lg border border-line">
            {group.entries.map(([k, v]) => (
              <div key={k} className="group flex items-start gap-3 px-2.5 py-1.5 text-[12.5px]">
                <dt className="w-2/5 shrink-0 font-mono text-[12px] break-all text-muted">{k}</dt>
                <dd className="min-w-0 flex-1 font-mono text-[12px] break-all text-fg">{v}</dd>
                <CopyButton text={v} label={`Copy ${k}`} className="opacity-0 group-hover:opacity-100" />
              </div>
            ))}
          </dl>
        </section>
      ))}
      {groups.length === 0 ? <p className="text-xs text-muted">No attribute matches “{find}”.</p> : null}
    </div>
  );
}

export function EventsTab({ node }: { node: SpanNode }) {
  const events = [...node.span.events].sort((a, b) => a.timestamp_unix_nano - b.timestamp_unix_nano);
  if (events.length === 0) return <EmptyState compact icon={Sparkles} title="No span events" />;
  return (
    <ol className="relative space-y-3 border-l border-line pl-4">
      {events.map((event, i) => {
        const at = event.timestamp_unix_nano / 1e6;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: events have no id
          <li key={i} className="relative">
            <span
              className={`absolute top-1.5 -left-[21px] size-2.5 rounded-full border-2 border-surface ${event.name === 'exception' ? 'bg-bad' : 'bg-accent'}`}
            />
            <div className="flex items-baseline gap-2">
              <span className="text-[13px] font-medium">{event.name}</span>
              <span className="font-mono text-[11px] text-faint">+{formatDuration(at - node.startMs)}</span>
            </div>
            {event.attributes.length > 0 ? (
              <dl className="mt-1 space-y-0.5">
                {event.attributes.map(([k, v]) => (
                  <div key={k} className="flex gap-2 text-[12px]">
                    <dt className="shrink-0 font-mono text-muted">{k}</dt>
                    <dd className="min-w-0 font-mono break-all whitespace-pre-wrap">{v.length > 400 ? `${v.slice(0, 400)}…` : v}</dd>
                  </div>
                ))}
              </dl>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

const severityTone = (text: string): Tone => {
  const t = text.toUpperCase();
  if (t.startsWith('ERR') || t.startsWith('FATAL')) return 'bad';
  if (t.startsWith('WARN')) return 'warn';
  if (t.startsWith('DEBUG') || t.startsWith('TRACE')) return 'neutral';
  return 'info';
};

export function LogsTab({ query, node }: { query: UseQueryResult<StoredLog[]>; node: SpanNode }) {
  const [open, setOpen] = useState<number | null>(null);
  if (query.isPending) {
    return (
      <div className="flex items-center gap-2 text-xs text-muted">
        <Spinner size={12} /> Loading logs…
      </div>
    );
  }
  if (query.isError) return <ErrorNote title="Could not load this span's logs" error={query.error} />;
  const logs = [...query.data].sort((a, b) => a.timestamp_unix_nano - b.timestamp_unix_nano);
  if (logs.length === 0) {
    return (
      <EmptyState compact icon={FileText} title="No OTel logs for this span">
        Log records carry the trace and span id of the code that wrote them.
        {node.span.events.length > 0 ? ` This span has ${pluralize(node.span.events.length, 'span event')}: see Events.` : ''}
      </EmptyState>
    );
  }
  return (
    <ul className="space-y-1.5" data-testid="span-logs">
      {logs.map((log, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: log records have no id
        <li key={i} className="rounded-lg border border-line">
          <button
            type="button"
            onClick={() => setOpen(open === i ? null : i)}
            className="flex w-full cursor-pointer items-start gap-2 px-2.5 py-1.5 text-left"
          >
            <Badge tone={severityTone(log.severity_text)} mono>
              {log.severity_text || `SEV${log.severity_number}`}
            </Badge>
            <span className="min-w-0 flex-1 text-[12.5px] break-words">{log.body}</span>
            <span className="shrink-0 font-mono text-[11px] text-faint">
              +{formatDuration(log.timestamp_unix_nano / 1e6 - node.startMs)}
            </span>
          </button>
          {open === i ? <JsonView value={log} className="m-2 mt-0" maxHeight={260} label="log record" /> : null}
        </li>
      ))}
    </ul>
  );
}

export function ErrorsTab({ errors }: { errors: SpanError[] }) {
  if (errors.length === 0) return <EmptyState compact icon={Bug} title="No errors on this span" />;
  return (
    <div className="space-y-3" data-testid="span-errors">
      {errors.map((error, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: errors have no id
        <section key={i} className="rounded-lg border border-bad/30 bg-bad-soft">
          <header className="flex flex-wrap items-center gap-2 px-3 py-2">
            {error.type ? (
              <Badge tone="bad" mono>
                {error.type}
              </Badge>
            ) : null}
            <span className="min-w-0 flex-1 text-[13px] font-medium break-words text-bad">{error.message}</span>
            <span className="text-[11px] text-faint">
              {error.source === 'event' ? 'exception event' : error.source === 'status' ? 'span status' : 'attributes'}
            </span>
          </header>
          {error.stack ? (
            <pre className="max-h-72 overflow-auto border-t border-bad/20 bg-surface px-3 py-2 font-mono text-[11.5px] leading-relaxed whitespace-pre text-fg">
              {error.stack}
            </pre>
          ) : null}
        </section>
      ))}
    </div>
  );
}

export function BaggageTab({ span, baggage }: { span: StoredSpan; baggage: Array<[string, string]> }) {
  const session = firstAttr(span.attributes, ['eng.session.id', 'iii.session.id']);
  const context: Array<[ReactNode, ReactNode]> = [
    ['traceparent', <IdRow key="tp" value={traceparentOf(span)} label="traceparent" />],
    ['tracestate', span.trace_state ? <Mono key="ts">{span.trace_state}</Mono> : '—'],
    ['sampled', ((span.flags ?? 1) & 1) === 1 ? 'yes' : 'no'],
  ];
  if (session) context.push(['session', <Mono key="sess">{session}</Mono>]);
  const message = attr(span.attributes, 'eng.message.id') ?? attr(span.attributes, 'iii.message.id');
  if (message) context.push(['message', <Mono key="msg">{message}</Mono>]);
  return (
    <div className="space-y-4">
      <section>
        <h4 className="mb-1.5 text-[11px] font-semibold tracking-wide text-faint uppercase">Baggage</h4>
        {baggage.length === 0 ? (
          <EmptyState compact icon={Luggage} title="No baggage recorded on this span">
            OTel SDKs record W3C baggage members as <code className="font-mono">baggage.*</code> attributes.
          </EmptyState>
        ) : (
          <dl className="divide-y divide-line rounded-lg border border-line" data-testid="span-baggage">
            {baggage.map(([k, v]) => (
              <div key={k} className="flex gap-3 px-2.5 py-1.5 text-[12.5px]">
                <dt className="w-2/5 shrink-0 font-mono text-[12px] text-muted">{k}</dt>
                <dd className="min-w-0 flex-1 font-mono text-[12px] break-all">{v}</dd>
              </div>
            ))}
          </dl>
        )}
      </section>
      <section>
        <h4 className="mb-1.5 text-[11px] font-semibold tracking-wide text-faint uppercase">Trace context</h4>
        <DefinitionList items={context} />
      </section>
    </div>
  );
}

export function LinksTab({
  model,
  span,
  onSelect,
  onOpenTrace,
}: {
  model: TraceModel;
  span: StoredSpan;
  onSelect: (id: string) => void;
  onOpenTrace: (traceId: string, spanId?: string) => void;
}) {
  if (span.links.length === 0) {
    return (
      <EmptyState compact icon={Link2} title="No span links">
        A link ties this span to a span of another trace, e.g. the message that caused it.
      </EmptyState>
    );
  }
  return (
    <ul className="space-y-2" data-testid="span-links">
      {span.links.map((link) => {
        const sameTrace = link.trace_id === span.trace_id;
        const target = sameTrace ? model.byId.get(link.span_id) : undefined;
        return (
          <li key={`${link.trace_id}:${link.span_id}`} className="rounded-lg border border-line p-2.5">
            <button
              type="button"
              data-testid="span-link"
              onClick={() => (sameTrace ? onSelect(link.span_id) : onOpenTrace(link.trace_id, link.span_id))}
              className="flex w-full cursor-pointer items-center gap-2 text-left text-[13px] text-accent hover:underline"
            >
              <ArrowUpRight size={14} className="shrink-0" />
              {sameTrace ? `Span ${target?.span.name ?? shortId(link.span_id)} in this trace` : `Open trace ${shortId(link.trace_id, 12)}…`}
            </button>
            <div className="mt-1 font-mono text-[11px] break-all text-muted">
              {link.trace_id} / {link.span_id}
            </div>
            {link.attributes.length > 0 ? (
              <dl className="mt-1.5 space-y-0.5">
                {link.attributes.map(([k, v]) => (
                  <div key={k} className="flex gap-2 text-[12px]">
                    <dt className="font-mono text-muted">{k}</dt>
                    <dd className="font-mono break-all">{v}</dd>
                  </div>
                ))}
              </dl>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
