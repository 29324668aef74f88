import { KeyRound, Trash2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import {
  apiKeyProblem,
  isSecret,
  type JsonSchema,
  ROUTER_ENTRY,
  useProviderSlice,
  useRemoveProviderKey,
  useSaveProviderSlice,
} from '../../api/chat-models.ts';
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
 * reads "set", and leaving it empty keeps it; a blank key is refused, and "Remove key" deletes the
 * stored one (issue 25 item 4).
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
  const remove = useRemoveProviderKey();
  const [values, setValues] = useState<Record<string, string>>({});
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [done, setDone] = useState<'saved' | 'removed' | undefined>();
  const [confirmRemove, setConfirmRemove] = useState(false);
  useEffect(() => {
    if (slice.data) setValues(initialValues(slice.data.schema, slice.data.value));
  }, [slice.data]);
  const group = groups.find((g) => g.provider === provider);
  const label = group?.label ?? provider;
  const envVar = group?.credentialEnvVar;
  const fields = Object.entries(slice.data?.schema.properties ?? {});
  const isStored = (name: string) => {
    const stored = slice.data?.value[name];
    return stored !== undefined && stored !== null;
  };

  /** A key typed blank, or no key at all where none is stored and nothing else would reach the provider. */
  const check = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [name, field] of fields) {
      if (kindOf(name, field) !== 'secret') continue;
      const raw = values[name] ?? '';
      const blank = apiKeyProblem(raw);
      if (blank) out[name] = blank.replace('API key (api_key)', `${field.title ?? name} (${name})`);
      else if (raw === '' && !isStored(name) && !fields.some(([other]) => other !== name && (values[other] ?? '').trim() !== ''))
        out[name] =
          `${field.title ?? name} (${name}) must not be empty: paste ${label}'s key${fields.some(([n]) => n === 'api_url') ? ', or give the API URL of a local server that needs none' : ''}`;
    }
    return out;
  };

  const submit = async () => {
    if (!slice.data) return;
    setDone(undefined);
    const found = check();
    setProblems(found);
    if (Object.keys(found).length) return;
    const out: Record<string, unknown> = {};
    for (const [name, field] of fields) {
      const raw = values[name] ?? '';
      const kind = kindOf(name, field);
      out[name] = kind === 'integer' || kind === 'number' ? (raw.trim() === '' ? '' : Number(raw)) : raw.trim() === '' ? '' : raw;
    }
    await save.mutateAsync({ provider, form: slice.data, values: out });
    setDone('saved');
    void slice.refetch();
  };

  const removeKey = async () => {
    setDone(undefined);
    await remove.mutateAsync(provider);
    setConfirmRemove(false);
    setDone('removed');
    void slice.refetch();
  };

  return (
    <Dialog open onClose={onClose} title={`Configure ${label}`} labelledBy="provider-config-title" className="max-w-md">
      <form
        className="space-y-3 px-4 py-4"
        data-testid="provider-config"
        data-provider={provider}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit().catch(() => undefined);
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
            const isSet = kind === 'secret' && isStored(name);
            const id = `provider-field-${name}`;
            const problem = problems[name];
            return (
              <div key={name} className="space-y-1">
                <div className="flex min-h-6 items-center gap-2">
                  <label htmlFor={id} className="flex min-w-0 items-center gap-2 text-[12.5px] font-medium text-fg">
                    {kind === 'secret' ? <KeyRound size={12} className="text-faint" /> : null}
                    {field.title ?? name}
                    {isSet ? (
                      <Badge tone="ok">
                        <span data-testid={`secret-set-${name}`}>set</span>
                      </Badge>
                    ) : null}
                  </label>
                  {isSet && !confirmRemove ? (
                    <Button
                      size="xs"
                      variant="ghost"
                      icon={Trash2}
                      className="ml-auto"
                      onClick={() => setConfirmRemove(true)}
                      data-testid="remove-key"
                      title={`Delete the stored ${field.title ?? name} of ${label} from the ${ROUTER_ENTRY} entry`}
                    >
                      Remove key
                    </Button>
                  ) : null}
                </div>
                {isSet && confirmRemove ? (
                  <div
                    className="flex flex-wrap items-center gap-2 rounded-lg border border-bad/30 bg-bad-soft px-2.5 py-2 text-xs text-bad"
                    data-testid="remove-key-confirm"
                  >
                    <span className="min-w-0 flex-1">
                      Remove the stored key? {label} has no credential afterwards unless the router's environment gives one.
                    </span>
                    <Button size="xs" variant="ghost" onClick={() => setConfirmRemove(false)} disabled={remove.isPending}>
                      Keep it
                    </Button>
                    <Button
                      size="xs"
                      variant="danger"
                      onClick={() => void removeKey().catch(() => undefined)}
                      loading={remove.isPending}
                      data-testid="remove-key-confirm-button"
                    >
                      Remove
                    </Button>
                  </div>
                ) : null}
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
                    aria-invalid={problem ? true : undefined}
                    aria-describedby={problem ? `${id}-problem` : undefined}
                    className={problem ? 'border-bad! focus:ring-bad/20!' : undefined}
                    onChange={(e) => {
                      const next = e.target.value;
                      setValues((v) => ({ ...v, [name]: next }));
                      if (problem) setProblems(({ [name]: _gone, ...rest }) => rest);
                    }}
                    placeholder={isSet ? 'set — type a new value to replace it' : kind === 'secret' ? 'not set' : ''}
                  />
                )}
                {problem ? (
                  <p id={`${id}-problem`} role="alert" className="text-[11.5px] text-bad" data-testid={`field-problem-${name}`}>
                    {problem}
                  </p>
                ) : field.description ? (
                  <p className="text-[11.5px] text-faint">{field.description}</p>
                ) : null}
              </div>
            );
          })
        )}
        {save.error ? <ErrorNote title="configuration::set failed" error={save.error} /> : null}
        {remove.error ? <ErrorNote title="Removing the key failed (configuration::set)" error={remove.error} /> : null}
        {done === 'saved' && !save.isPending && !save.error ? (
          <p className="text-xs text-ok" data-testid="provider-config-saved">
            Saved. The model list refreshes as soon as the router has listed {label}'s models.
          </p>
        ) : null}
        {done === 'removed' && !remove.isPending ? (
          <p className="text-xs text-muted" data-testid="provider-key-removed" data-state={group?.state ?? ''}>
            Key removed.{' '}
            {group?.state === 'not-configured'
              ? `${label} is not configured now.`
              : group?.state === 'ready'
                ? `${label} is still configured: ${envVar ? `${envVar} in the router's environment, or ` : ''}its API URL (a local server) gives it a credential.`
                : ''}
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
