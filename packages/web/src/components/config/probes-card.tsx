import { type Probe, useBrowserProbes, useServerProbes } from '../../api/probes.ts';
import { formatDuration } from '../../lib/format.ts';
import { StatusDot } from '../ui/badge.tsx';
import { Card, CardHeader } from '../ui/card.tsx';
import { Spinner } from '../ui/spinner.tsx';

/** Live probes, re-run every 10 s: from the browser through the console, and from the console to the engine. */
export function ProbesCard() {
  const browser = useBrowserProbes();
  const server = useServerProbes();
  return (
    <Card>
      <CardHeader title="Engine connectivity" description="Live probes, repeated every 10 seconds" />
      <div className="px-4 py-2">
        <h3 className="pt-1 pb-1 text-[11px] font-semibold tracking-wider text-faint uppercase">From this browser</h3>
        <ProbeList probes={browser.data} loading={browser.isPending} />
        <h3 className="pt-3 pb-1 text-[11px] font-semibold tracking-wider text-faint uppercase">From the console server</h3>
        {server.data && !server.data.available ? (
          <p className="py-2 text-[12.5px] text-muted">Not available: {server.data.reason}.</p>
        ) : server.isError ? (
          <p className="py-2 text-[12.5px] text-muted">Not available: {(server.error as Error).message}.</p>
        ) : (
          <ProbeList probes={server.data?.available ? server.data.probes : undefined} loading={server.isPending} />
        )}
      </div>
    </Card>
  );
}

function ProbeList({ probes, loading }: { probes?: Probe[]; loading: boolean }) {
  if (loading && !probes) {
    return (
      <p className="flex items-center gap-2 py-2 text-[12.5px] text-muted">
        <Spinner size={12} /> Probing…
      </p>
    );
  }
  return (
    <ul className="divide-y divide-line">
      {(probes ?? []).map((p) => (
        <li key={p.id} className="flex items-start gap-3 py-2" data-testid={`probe-${p.id}`} data-ok={p.ok}>
          <StatusDot tone={p.ok ? 'ok' : 'bad'} className="mt-1.5" />
          <div className="min-w-0 flex-1">
            <div className="flex items-center justify-between gap-2 text-[13px]">
              <span className="font-medium text-fg">{p.label}</span>
              <span className={`tabular-nums ${p.ok ? 'text-muted' : 'text-bad'}`}>
                {p.ok && p.latencyMs !== undefined ? formatDuration(p.latencyMs) : 'unreachable'}
              </span>
            </div>
            <div className="truncate font-mono text-[11.5px] text-faint">{p.target}</div>
            <div className={`text-[11.5px] ${p.ok ? 'text-muted' : 'text-bad'}`}>{p.detail}</div>
          </div>
        </li>
      ))}
    </ul>
  );
}
