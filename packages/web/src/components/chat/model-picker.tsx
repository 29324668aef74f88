import { Check, ChevronDown, Cpu, Settings2, WifiOff } from 'lucide-react';
import { memo, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { effortsOf, type Model, type ModelGroup, modelKey, modelLabel } from '../../lib/chat/models.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { Spinner } from '../ui/spinner.tsx';
import { ProviderConfigDialog } from './provider-config.tsx';

/**
 * The provider whose settings are open: the picker's "configure" buttons and whatever else sends a
 * person there (a turn that failed with a 401 names its provider, issue 25 item 4).
 */
let configuring: string | undefined;
const listeners = new Set<() => void>();
function setConfiguring(provider: string | undefined): void {
  configuring = provider;
  for (const listener of listeners) listener();
}
/** Open the picker's configuration dialog of a provider (API key and URL). */
export const openProviderSettings = (provider: string) => setConfiguring(provider);
function useConfiguring(): string | undefined {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => configuring,
  );
}

/**
 * The model picker (seed 2.9): models grouped by provider, "not configured" / "not loaded" groups
 * with a configure action, the static fallback list when the catalogue is unreachable, the
 * reasoning-effort row for a model that supports it, and the explanation of what to do when no
 * provider has a credential.
 */

export const ModelPicker = memo(function ModelPicker({
  groups,
  loading,
  offline,
  selected,
  effort,
  onSelect,
  onEffort,
}: {
  groups: ModelGroup[];
  loading: boolean;
  /** The catalogue is unreachable: the groups are the fallback list. */
  offline: boolean;
  selected: Model | undefined;
  effort: string | undefined;
  onSelect: (model: Model) => void;
  onEffort: (effort: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const configure = useConfiguring();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        setOpen(false);
      }
    };
    window.addEventListener('mousedown', onDown);
    window.addEventListener('keydown', onKey, true);
    return () => {
      window.removeEventListener('mousedown', onDown);
      window.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
  const efforts = effortsOf(selected);
  const noModels = !offline && groups.every((g) => g.models.length === 0);
  const label = selected ? modelLabel(selected) : noModels ? 'No models' : 'Pick a model';
  const shownEffort = effort && effort !== 'default' && efforts.includes(effort) ? effort : undefined;
  return (
    // the model is what a person checks before sending: the working directory gives up its room
    // first, and only a very narrow composer shortens the model's name. There the menu opens from
    // the composer's edge, not the button's (it would leave the screen)
    <div className="relative min-w-16 @max-lg:static @sm:shrink-0" ref={box}>
      <button
        type="button"
        onClick={() => setOpen((v) => !v)}
        aria-haspopup="listbox"
        aria-expanded={open}
        data-testid="model-picker"
        data-model={selected ? modelKey(selected) : ''}
        title={`Model: ${label}${shownEffort ? ` (effort ${shownEffort})` : ''}`}
        className="inline-flex h-7 max-w-[min(15rem,100%)] min-w-0 cursor-pointer items-center gap-1.5 rounded-md border border-line bg-surface px-2 text-[12.5px] text-fg hover:bg-surface-2"
      >
        {loading ? (
          <Spinner size={12} />
        ) : offline ? (
          <WifiOff size={13} className="shrink-0 text-warn" />
        ) : (
          <Cpu size={13} className="shrink-0 text-faint @max-sm:hidden" />
        )}
        <span className="max-w-44 min-w-0 truncate">{label}</span>
        {shownEffort ? (
          <Badge tone="violet" className="@max-sm:hidden">
            {shownEffort}
          </Badge>
        ) : null}
        <ChevronDown size={13} className="shrink-0 text-faint @max-sm:hidden" />
      </button>
      {open ? (
        <div
          className="absolute bottom-full left-0 z-30 mb-2 w-80 max-w-full overflow-hidden rounded-lg border border-line bg-surface shadow-pop"
          data-testid="model-menu"
        >
          {offline ? (
            <p className="border-b border-line bg-warn-soft px-3 py-2 text-xs text-warn" data-testid="model-fallback">
              The model catalogue (router::models::list) is unreachable; these are the usual models of three providers.
            </p>
          ) : null}
          {noModels ? <NoCredentials groups={groups} onConfigure={setConfiguring} /> : null}
          <div className="max-h-80 overflow-y-auto py-1" role="listbox">
            {groups.map((g) => (
              <div key={g.provider} data-testid="model-group" data-provider={g.provider} data-state={g.state}>
                <div className="flex items-center gap-2 px-3 pt-2 pb-1 text-[10.5px] font-semibold tracking-wider text-faint uppercase">
                  <span>{g.label}</span>
                  {g.state === 'not-configured' ? <Badge>not configured</Badge> : null}
                  {g.state === 'not-loaded' ? <Badge tone="warn">not loaded</Badge> : null}
                  <span className="flex-1" />
                  {g.state !== 'fallback' ? (
                    <button
                      type="button"
                      className="inline-flex cursor-pointer items-center gap-1 rounded px-1 py-0.5 text-[11px] font-medium tracking-normal text-muted normal-case hover:bg-surface-2 hover:text-fg"
                      onClick={() => setConfiguring(g.provider)}
                      data-testid={`configure-${g.provider}`}
                      title={`Configure ${g.label}: API key and URL`}
                    >
                      <Settings2 size={12} /> configure
                    </button>
                  ) : null}
                </div>
                {g.models.map((m) => {
                  const isSelected = selected !== undefined && modelKey(selected) === modelKey(m);
                  return (
                    <button
                      type="button"
                      role="option"
                      aria-selected={isSelected}
                      key={modelKey(m)}
                      data-testid="model-option"
                      data-model={modelKey(m)}
                      onClick={() => {
                        onSelect(m);
                        if (effortsOf(m).length === 0) setOpen(false);
                      }}
                      className={cn(
                        'flex w-full cursor-pointer items-center gap-2 px-3 py-1.5 text-left text-[13px] hover:bg-surface-2',
                        isSelected ? 'text-fg' : 'text-muted',
                      )}
                    >
                      <Check size={13} className={cn('shrink-0 text-accent', !isSelected && 'invisible')} />
                      <span className="truncate">{modelLabel(m)}</span>
                      <span className="flex-1" />
                      {m.supports_vision ? <span className="text-[10.5px] text-faint">vision</span> : null}
                      {m.supports_thinking || m.reasoning_efforts?.length ? (
                        <span className="text-[10.5px] text-faint">reasoning</span>
                      ) : null}
                      <span className="text-[10.5px] text-faint tabular-nums">{Math.round(m.context_window / 1000)}k</span>
                    </button>
                  );
                })}
                {g.state === 'not-configured' ? (
                  <p className="px-3 pb-1.5 pl-8 text-xs text-faint">
                    No credential{g.credentialEnvVar ? ` (configure, or ${g.credentialEnvVar} in the router's environment)` : ''}
                  </p>
                ) : null}
                {g.state === 'not-loaded' ? (
                  <p className="px-3 pb-1.5 pl-8 text-xs text-faint">Its provider worker is not connected.</p>
                ) : null}
              </div>
            ))}
          </div>
          {efforts.length > 0 ? (
            <div className="border-t border-line px-3 py-2" data-testid="effort-row">
              <p className="mb-1.5 text-[10.5px] font-semibold tracking-wider text-faint uppercase">Reasoning effort</p>
              <div className="flex flex-wrap gap-1">
                {efforts.map((e) => (
                  <button
                    type="button"
                    key={e}
                    onClick={() => onEffort(e)}
                    aria-pressed={(effort ?? 'default') === e}
                    data-testid="effort-option"
                    className={cn(
                      'h-6 cursor-pointer rounded-md border px-2 text-xs',
                      (effort ?? 'default') === e
                        ? 'border-accent bg-accent-soft text-accent'
                        : 'border-line text-muted hover:bg-surface-2 hover:text-fg',
                    )}
                  >
                    {e}
                  </button>
                ))}
              </div>
            </div>
          ) : null}
        </div>
      ) : null}
      {configure ? <ProviderConfigDialog provider={configure} groups={groups} onClose={() => setConfiguring(undefined)} /> : null}
    </div>
  );
});

function NoCredentials({ groups, onConfigure }: { groups: ModelGroup[]; onConfigure: (provider: string) => void }) {
  const first = groups.find((g) => g.state !== 'not-loaded') ?? groups[0];
  return (
    <div className="space-y-1.5 border-b border-line px-3 py-2.5 text-xs leading-relaxed text-muted" data-testid="no-models">
      <p className="text-[13px] font-medium text-fg">No models: no provider has a credential, so chat cannot generate.</p>
      <p>Any one of these fills the list within seconds:</p>
      <ul className="list-disc space-y-0.5 pl-4">
        <li>
          enter an API key:{' '}
          {first ? (
            <button type="button" className="cursor-pointer text-accent underline" onClick={() => onConfigure(first.provider)}>
              configure {first.label}
            </button>
          ) : (
            'configure a provider below'
          )}
        </li>
        <li>
          set{' '}
          {groups
            .map((g) => g.credentialEnvVar)
            .filter(Boolean)
            .map((v) => (
              <code key={v} className="mr-1 font-mono text-fg">
                {v}
              </code>
            ))}
          in the llm-router worker's environment and restart it
        </li>
        <li>
          point OpenAI's API URL at a local OpenAI-compatible server (llama.cpp, Ollama, vLLM), e.g.{' '}
          <code className="font-mono text-fg">http://127.0.0.1:8080/v1</code>
        </li>
      </ul>
    </div>
  );
}
