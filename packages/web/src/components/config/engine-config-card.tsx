import { useEngineConfig } from '../../api/engine-config.ts';
import { Card, CardHeader } from '../ui/card.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { Spinner } from '../ui/spinner.tsx';

/**
 * The configuration file the engine runs, as the engine reports it (`engine::config::get`): the
 * console servers read their own folder's config.yaml, which is not the engine's after
 * `eng start -c other.yaml`. Credentials arrive redacted; `${VAR}` is shown as written.
 */
export function EngineConfigCard() {
  const query = useEngineConfig();
  const result = query.data;
  const config = result?.available ? result.config : undefined;
  return (
    <Card className="xl:col-span-2">
      <CardHeader
        title="Engine configuration"
        description="The file the engine was started with, as the engine reports it (credentials redacted, ${VAR} as written)"
        actions={config?.path ? <CopyButton text={config.path} label="Copy the configuration file's path" /> : undefined}
      />
      <div className="px-4 py-3 text-[12.5px]" data-testid="engine-config">
        {config ? (
          <>
            <p className="text-muted">
              {config.path ? (
                <>
                  File{' '}
                  <code className="font-mono text-[12px] text-fg" data-testid="engine-config-path">
                    {config.path}
                  </code>
                </>
              ) : (
                `No configuration file: the engine runs its default modules (${(config.workers ?? []).map((w) => w.name).join(', ')}).`
              )}
            </p>
            {config.text !== null ? (
              <pre
                className="mt-2 max-h-96 overflow-auto rounded-lg border border-line bg-surface-2 px-3 py-2 font-mono text-[11.5px] leading-relaxed whitespace-pre text-fg"
                data-testid="engine-config-text"
              >
                {config.text}
              </pre>
            ) : null}
          </>
        ) : result && !result.available ? (
          <p className="text-muted" role="status">
            Not shown: {result.reason}.
          </p>
        ) : query.isError ? (
          <p className="text-muted" role="status">
            Not shown: the engine did not answer ({(query.error as Error).message}).
          </p>
        ) : (
          <p className="flex items-center gap-2 text-muted">
            <Spinner size={12} /> Asking the engine…
          </p>
        )}
      </div>
    </Card>
  );
}
