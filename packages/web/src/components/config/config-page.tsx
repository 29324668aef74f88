import { useQueryClient } from '@tanstack/react-query';
import { RefreshCw } from 'lucide-react';
import { useConnection } from '../../api/client.ts';
import { serverKindOf, useConsoleConfig } from '../../api/console-config.ts';
import { useConsoleStatus } from '../../api/console-status.ts';
import { useEngineConfig } from '../../api/engine-config.ts';
import { useEngineHealth } from '../../api/health.ts';
import { probeKeys } from '../../api/probes.ts';
import { useTriggerTypes } from '../../api/triggers.ts';
import { useWorkers } from '../../api/workers.ts';
import { commandLineOf, flagsFor, sourceLabel } from '../../lib/console-flags.ts';
import { pluralize } from '../../lib/format.ts';
import { Badge, StatusDot } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { Card, CardHeader } from '../ui/card.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EngineConfigCard } from './engine-config-card.tsx';
import { ProbesCard } from './probes-card.tsx';

declare const __UI_BUILD_TIME__: string;

/** Config (seed 2.8): connectivity with live probes, ports, OpenTelemetry settings, versions. */
export function ConfigPage() {
  const queryClient = useQueryClient();
  const config = useConsoleConfig();
  const engineConfig = useEngineConfig();
  const engineFile = engineConfig.data?.available ? engineConfig.data.config.path : undefined;
  const health = useEngineHealth(15_000);
  const workers = useWorkers();
  const types = useTriggerTypes();
  const conn = useConnection();
  const c = config.data?.available ? config.data.config : undefined;
  const modules = (workers.data ?? []).filter((w) => w.runtime === 'engine');
  const otel = health.data?.components.otel?.details as { exporter?: string; service_name?: string } | undefined;

  const kind = serverKindOf(config.data);
  const isWorker = kind === 'console-worker';
  const flags = flagsFor(kind);
  // the console worker's own word on the engine (seed 2.10), next to what this server answers
  const status = useConsoleStatus(isWorker);
  const commandLine = c ? commandLineOf(c) : '';
  const hint = (flag: string, key: 'engine_http_url' | 'engine_streams_url') =>
    isWorker ? [flag, sourceLabel(c?.sources?.[key])].filter(Boolean).join(' — ') : flag;

  return (
    <div className="pb-8">
      <PageHeader
        title="Config"
        description="How this console reaches the engine, and what is running where."
        actions={
          <Button size="sm" icon={RefreshCw} onClick={() => void queryClient.invalidateQueries({ queryKey: probeKeys.all })}>
            Probe again
          </Button>
        }
      />
      <div className="grid grid-cols-1 gap-4 p-4 md:p-6 xl:grid-cols-2">
        <ProbesCard />
        <Card>
          <CardHeader
            title="Ports and endpoints"
            description={
              isWorker
                ? 'This console worker’s resolved settings (flags, its config entry, the engine that launched it)'
                : c
                  ? 'The console’s resolved settings (flags, environment, defaults)'
                  : 'Settings of the serving console'
            }
          />
          {c ? (
            <dl className="divide-y divide-line px-4 text-[12.5px]" data-testid="config-ports">
              <Row label="Console UI" value={`http://${c.host}:${c.port}`} mono />
              <Row label="Engine host" value={c.engine_host} mono />
              <Row
                label="Engine HTTP API"
                value={c.engine_urls.http}
                mono
                hint={isWorker ? hint(flags.engineHttp, 'engine_http_url') : `--engine-port ${c.engine_port}`}
              />
              <Row
                label="Engine streams WebSocket"
                value={c.engine_urls.streams}
                mono
                hint={isWorker ? hint(flags.engineStreams, 'engine_streams_url') : `--ws-port ${c.ws_port}`}
              />
              <Row
                label="Engine SDK bridge"
                value={c.engine_urls.bridge}
                mono
                hint={isWorker ? '--url (ENG_URL)' : `--bridge-port ${c.bridge_port}`}
              />
              <Row label={c.bus === 'handoff' ? 'Browser bus (handed to the engine)' : 'Browser bus (proxied)'} value={conn.url} mono />
              <Row label="Flow page" value={c.enable_flow ? 'enabled' : `disabled (${flags.flow.join(', ')})`} />
              {isWorker ? (
                <>
                  <Row
                    label="Launched"
                    value={c.launched_by_engine ? 'by the engine (console entry of its config)' : 'by hand (eng-console-worker)'}
                  />
                  {/* the engine's file, as it reports it: this worker's folder may hold another config.yaml */}
                  <Row
                    label="Engine config file"
                    value={engineFile ?? (engineFile === null ? 'none (default modules)' : '—')}
                    mono
                    hint={c.config_found ? `this worker also reads ${c.config_path}` : undefined}
                  />
                </>
              ) : null}
            </dl>
          ) : (
            <Unavailable
              reason={config.data && !config.data.available ? config.data.reason : 'loading…'}
              extra={`The UI talks to the engine through ${conn.url}.`}
            />
          )}
          {commandLine ? (
            <div className="flex items-center gap-2 border-t border-line px-4 py-2.5">
              <code className="min-w-0 flex-1 truncate font-mono text-[12px] text-muted" data-testid="config-command-line">
                {commandLine}
              </code>
              <CopyButton text={commandLine} label="Copy command line" />
            </div>
          ) : null}
        </Card>
        <Card>
          <CardHeader title="OpenTelemetry" description="The console’s own traces and the engine’s telemetry pipeline" />
          <dl className="divide-y divide-line px-4 text-[12.5px]" data-testid="config-otel">
            <Row
              label="Console traces"
              value={
                isWorker ? (
                  <Badge>none (the console worker exports no traces)</Badge>
                ) : c ? (
                  c.otel.enabled ? (
                    <Badge tone="ok">exporting</Badge>
                  ) : (
                    <Badge>disabled (--no-otel)</Badge>
                  )
                ) : (
                  '—'
                )
              }
            />
            <Row label="Console service name" value={isWorker ? '—' : (c?.otel.service_name ?? '—')} mono />
            <Row label="OTLP endpoint" value={c?.otel.endpoint ?? (c && !isWorker ? 'none' : '—')} mono />
            <Row
              label="Engine exporter"
              value={
                otel?.exporter ??
                ((health.error as { code?: string } | null)?.code === 'function_not_found' ? 'observability module not loaded' : '—')
              }
              mono
            />
            <Row label="Engine service name" value={otel?.service_name ?? '—'} mono />
            {Object.entries(health.data?.components ?? {}).map(([name, comp]) => (
              <Row
                key={name}
                label={`Engine ${name}`}
                value={
                  <span className="inline-flex items-center gap-1.5">
                    <StatusDot tone={comp.status === 'healthy' ? 'ok' : comp.status === 'disabled' ? 'neutral' : 'warn'} />
                    {comp.status}
                    {detailHint(comp.details)}
                  </span>
                }
              />
            ))}
          </dl>
        </Card>
        <Card>
          <CardHeader title="Versions" />
          <dl className="divide-y divide-line px-4 text-[12.5px]" data-testid="config-versions">
            {isWorker ? (
              <>
                <Row label="Console worker" value={`v${status.data?.version ?? c?.version}`} mono />
                <Row
                  label="console::status"
                  value={
                    status.data
                      ? `v${status.data.version} · port ${status.data.http_port} · ${status.data.engine_url}`
                      : status.isPending
                        ? '…'
                        : status.data === null
                          ? 'not registered with the engine'
                          : 'no answer'
                  }
                  mono
                  hint={status.data?.url}
                />
              </>
            ) : (
              <Row label="eng-console" value={c ? `v${c.version}` : 'not served by eng-console'} mono />
            )}
            <Row label="Engine" value={health.data?.version ? `v${health.data.version}` : '—'} mono />
            <Row label="Console server runtime" value={c?.node_version ? `Node ${c.node_version}` : '—'} mono />
            <Row
              label="UI bundle built"
              value={typeof __UI_BUILD_TIME__ === 'string' ? new Date(__UI_BUILD_TIME__).toLocaleString() : 'development'}
            />
          </dl>
        </Card>
        <EngineConfigCard />
        <Card className="xl:col-span-2">
          <CardHeader
            title="Engine modules and trigger types"
            description="Modules loaded by the engine's config.yaml and the trigger types available to workers"
          />
          <div className="grid grid-cols-1 gap-4 p-4 md:grid-cols-2">
            <div>
              <h3 className="mb-2 text-[11px] font-semibold tracking-wider text-faint uppercase">Modules ({modules.length})</h3>
              <ul className="flex flex-wrap gap-1.5">
                {modules.map((m) => (
                  <li key={m.id}>
                    <Badge tone="accent" mono title={m.description ?? undefined}>
                      {m.name} · {m.function_count} fn
                    </Badge>
                  </li>
                ))}
              </ul>
            </div>
            <div>
              <h3 className="mb-2 text-[11px] font-semibold tracking-wider text-faint uppercase">
                Trigger types ({types.data?.length ?? 0})
              </h3>
              <ul className="flex flex-wrap gap-1.5">
                {(types.data ?? []).map((t) => (
                  <li key={t.id}>
                    <Badge mono title={`${t.description ?? ''} — ${t.instance_count} bound, from ${t.worker_name}`}>
                      {t.id}
                      {t.instance_count ? <span className="text-faint">×{t.instance_count}</span> : null}
                    </Badge>
                  </li>
                ))}
              </ul>
            </div>
          </div>
        </Card>
      </div>
    </div>
  );
}

function detailHint(details: Record<string, unknown> | undefined): string {
  if (!details) return '';
  if (typeof details.stored_spans === 'number') return ` · ${pluralize(details.stored_spans, 'span')} stored`;
  if (typeof details.stored_logs === 'number') return ` · ${pluralize(details.stored_logs, 'log')} stored`;
  return '';
}

export function Row({ label, value, mono, hint }: { label: string; value: React.ReactNode; mono?: boolean; hint?: string }) {
  return (
    <div className="flex items-center justify-between gap-4 py-2">
      <dt className="shrink-0 text-muted">{label}</dt>
      <dd className={`min-w-0 truncate text-right text-fg ${mono ? 'font-mono text-[12px]' : ''}`} title={hint}>
        {value}
      </dd>
    </div>
  );
}

export function Unavailable({ reason, extra }: { reason: string; extra?: string }) {
  return (
    <div className="px-4 py-5 text-[13px] text-muted" role="status">
      <p className="font-medium text-fg">Not available on this server</p>
      <p className="mt-1">{reason}.</p>
      {extra ? <p className="mt-1">{extra}</p> : null}
    </div>
  );
}
