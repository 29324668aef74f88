import { KeyRound } from 'lucide-react';
import { useEffect, useState } from 'react';
import { isSecret, type JsonSchema, ROUTER_ENTRY, useProviderSlice, useSaveProviderSlice } from '../../api/chat-models.ts';
import type { ModelGroup } from '../../lib/chat/models.ts';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput } from '../ui/inputs.tsx';
import { Spinner } from '../ui/spinner.tsx';

/**
 * Configure a provider from the model picker (seed 2.9 "Provider credentials"): a form generated
 * from the provider's slice of the `llm-router` configuration schema, saved with
 * `configuration::set`. A write-only field (the API key) never shows its value: once stored it
 * reads "set", and leaving it empty keeps it.
 */

type FieldKind = 'secret' | 'text' | 'integer' | 'number' | 'textarea';

function kindOf(name: string, schema: JsonSchema): FieldKind {
  if (isSecret(schema)) return 'secret';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  if (name.includes('prompt')) return 'textarea';
  return 'text';
}

function initialValues(schema: JsonSchema, value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const v = value[name];
    out[name] = isSecret(field) || v === undefined || v === null || typeof v === 'object' ? '' : String(v);
  }
  return out;
}

export function ProviderConfigDialog({ provider, groups, onClose }: { provider: string; groups: ModelGroup[]; onClose: () => void }) {
  const slice = useProviderSlice(provider);
  const save = useSaveProviderSlice();
  const [values, setValues] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (slice.data) setValues(initialValues(slice.data.schema, slice.data.value));
  }, [slice.data]);
  const label = groups.find((g) => g.provider === provider)?.label ?? provider;
  const envVar = groups.find((g) => g.provider === provider)?.credentialEnvVar;
  const fields = Object.entries(slice.data?.schema.properties ?? {});

  const submit = async () => {
    if (!slice.data) return;
    const out: Record<string, unknown> = {};
    for (const [name, field] of fields) {
      const raw = values[name] ?? '';
      const kind = kindOf(name, field);
      out[name] = kind === 'integer' || kind === 'number' ? (raw.trim() === '' ? '' : Number(raw)) : raw.trim() === '' ? '' : raw;
    }
    await save.mutateAsync({ provider, form: slice.data, values: out });
    setSaved(true);
    void slice.refetch();
  };

  return (
    <Dialog open onClose={onClose} title={`Configure ${label}`} labelledBy="provider-config-title" className="max-w-md">
      <form
        className="space-y-3 px-4 py-4"
        data-testid="provider-config"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <p className="text-xs leading-relaxed text-muted">
          Saved in the <code className="font-mono text-fg">{ROUTER_ENTRY}</code> configuration entry (providers.{provider}); the router
          reloads it and lists this provider's models within seconds.
          {envVar ? (
            <>
              {' '}
              Without a key here it reads <code className="font-mono text-fg">{envVar}</code> from its own environment.
            </>
          ) : null}
        </p>
        {slice.isPending ? (
          <div className="flex items-center gap-2 text-sm text-muted">
            <Spinner /> Reading the configuration schema…
          </div>
        ) : slice.error ? (
          <ErrorNote title="The llm-router configuration could not be read" error={slice.error} />
        ) : (
          fields.map(([name, field]) => {
            const kind = kindOf(name, field);
            const stored = slice.data?.value[name];
            const isSet = kind === 'secret' && stored !== undefined && stored !== null;
            const id = `provider-field-${name}`;
            return (
              <div key={name} className="space-y-1">
                <label htmlFor={id} className="flex items-center gap-2 text-[12.5px] font-medium text-fg">
                  {kind === 'secret' ? <KeyRound size={12} className="text-faint" /> : null}
                  {field.title ?? name}
                  {isSet ? (
                    <Badge tone="ok">
                      <span data-testid={`secret-set-${name}`}>set</span>
                    </Badge>
                  ) : null}
                </label>
                {kind === 'textarea' ? (
                  <textarea
                    id={id}
                    value={values[name] ?? ''}
                    onChange={(e) => setValues((v) => ({ ...v, [name]: e.target.value }))}
                    rows={3}
                    className="w-full rounded-lg border border-line-strong bg-surface px-2.5 py-1.5 text-[13px] text-fg outline-none focus:border-accent"
                  />
                ) : (
                  <TextInput
                    id={id}
                    name={name}
                    type={kind === 'secret' ? 'password' : kind === 'text' ? 'text' : 'number'}
                    autoComplete={kind === 'secret' ? 'off' : undefined}
                    value={values[name] ?? ''}
                    min={field.minimum}
                    onChange={(e) => setValues((v) => ({ ...v, [name]: e.target.value }))}
                    placeholder={isSet ? 'set — type a new value to replace it' : kind === 'secret' ? 'not set' : ''}
                  />
                )}
                {field.description ? <p className="text-[11.5px] text-faint">{field.description}</p> : null}
              </div>
            );
          })
        )}
        {save.error ? <ErrorNote title="configuration::set failed" error={save.error} /> : null}
        {saved && !save.isPending && !save.error ? (
          <p className="text-xs text-ok" data-testid="provider-config-saved">
            Saved. The model list refreshes as soon as the router has listed {label}'s models.
          </p>
        ) : null}
        <div className="flex justify-end gap-2 pt-1">
          <Button size="sm" variant="ghost" onClick={onClose}>
            Close
          </Button>
          <Button size="sm" variant="primary" type="submit" loading={save.isPending} disabled={!slice.data}>
            Save
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
