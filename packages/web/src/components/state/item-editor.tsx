import { AlertTriangle } from 'lucide-react';
import { useEffect, useState } from 'react';
import { stateKeyExists, useSetStateItem } from '../../api/state.ts';
import { Button } from '../ui/button.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput } from '../ui/inputs.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';

export type EditorMode = { kind: 'add'; scope?: string } | { kind: 'edit'; scope: string; key: string; value: unknown };

/**
 * Add or edit one item. The value must be valid JSON (a string is written with its quotes), so
 * nothing is stored by accident as text. Add warns before it overwrites an existing key.
 */
export function ItemEditor({
  mode,
  onClose,
  onSaved,
}: {
  mode: EditorMode | null;
  onClose: () => void;
  onSaved: (scope: string, key: string) => void;
}) {
  const [scope, setScope] = useState('');
  const [key, setKey] = useState('');
  const [text, setText] = useState('');
  const [overwrite, setOverwrite] = useState<string | null>(null);
  const save = useSetStateItem();

  const resetSave = save.reset;
  // a new editor session starts from the item (or blank) each time it opens
  useEffect(() => {
    if (!mode) return;
    resetSave();
    setOverwrite(null);
    if (mode.kind === 'edit') {
      setScope(mode.scope);
      setKey(mode.key);
      setText(JSON.stringify(mode.value, null, 2) ?? 'null');
    } else {
      setScope(mode.scope ?? '');
      setKey('');
      setText('{\n  \n}');
    }
  }, [mode, resetSave]);

  const parsed = parseJson(text);
  const problems: string[] = [];
  if (!scope.trim()) problems.push('a group (scope) is required');
  if (!key) problems.push('a key is required');
  if (!parsed.ok) problems.push('the value is not valid JSON');
  else if (parsed.value === undefined) problems.push('a value is required (use null for an empty value)');
  const valid = problems.length === 0;
  const editing = mode?.kind === 'edit';

  const submit = async () => {
    if (!valid || !parsed.ok) return;
    const target = `${scope}\u0000${key}`;
    if (!editing && overwrite !== target) {
      try {
        if (await stateKeyExists(scope, key)) {
          setOverwrite(target);
          return;
        }
      } catch {
        // the write below reports the problem
      }
    }
    save.mutate(
      { scope, key, value: parsed.value },
      {
        onSuccess: () => {
          onSaved(scope, key);
          onClose();
        },
      },
    );
  };

  return (
    <Dialog
      open={mode !== null}
      onClose={onClose}
      title={editing ? 'Edit item' : 'Add item'}
      labelledBy="state-editor-title"
      className="max-w-2xl"
      footer={
        <>
          <Button size="sm" variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button
            size="sm"
            variant={overwrite ? 'danger' : 'primary'}
            disabled={!valid}
            loading={save.isPending}
            onClick={() => void submit()}
            data-testid="state-save"
          >
            {overwrite ? 'Overwrite' : editing ? 'Save' : 'Add'}
          </Button>
        </>
      }
    >
      <div className="space-y-3 px-4 py-4">
        <div className="grid grid-cols-2 gap-3">
          <label htmlFor="state-editor-scope" className="block text-[12px] font-medium text-muted">
            Group (scope)
            <TextInput
              id="state-editor-scope"
              className="mt-1 font-mono"
              value={scope}
              disabled={editing}
              onChange={(e) => {
                setScope(e.target.value);
                setOverwrite(null);
              }}
              placeholder="orders"
              aria-label="Scope"
            />
          </label>
          <label htmlFor="state-editor-key" className="block text-[12px] font-medium text-muted">
            Key
            <TextInput
              id="state-editor-key"
              className="mt-1 font-mono"
              value={key}
              disabled={editing}
              autoFocus={!editing}
              onChange={(e) => {
                setKey(e.target.value);
                setOverwrite(null);
              }}
              placeholder="ord_123"
              aria-label="Key"
            />
          </label>
        </div>
        <div>
          <p className="mb-1 text-[12px] font-medium text-muted">Value (JSON)</p>
          <JsonEditor label="Value" value={text} onChange={setText} onSubmit={() => void submit()} minRows={8} />
        </div>
        {overwrite ? (
          <p role="alert" className="flex items-start gap-2 rounded-lg bg-warn-soft px-3 py-2 text-[13px] text-warn">
            <AlertTriangle size={15} className="mt-0.5 shrink-0" />
            <span>
              <b className="font-mono">{key}</b> already exists in <b className="font-mono">{scope}</b>. Overwrite replaces its value and
              fires <code>state:updated</code> triggers.
            </span>
          </p>
        ) : (
          <p className="text-[12px] text-faint">
            Saved with <code>state::set</code>, so <code>state</code> triggers bound to this scope fire
            {editing ? ' (state:updated).' : ' (state:created).'} A text value needs quotes: <code>"hello"</code>.
          </p>
        )}
        {!valid && text.trim() !== '' && (scope || key) ? (
          <p className="text-[12px] text-bad">Cannot save: {problems.join('; ')}.</p>
        ) : null}
        {save.error ? <ErrorNote title="The engine refused the write" error={save.error} /> : null}
      </div>
    </Dialog>
  );
}
