import { schemaFields } from '../../lib/json-schema.ts';
import { JsonView } from '../ui/json-view.tsx';

/** Request/response schema as a field table (iii-hq/workers#223), with the raw schema below. */
export function SchemaTable({ schema, emptyText }: { schema: unknown; emptyText: string }) {
  if (schema === null || schema === undefined) return <p className="text-[13px] text-muted">{emptyText}</p>;
  const fields = schemaFields(schema);
  return (
    <div className="space-y-2">
      {fields.length ? (
        <div className="overflow-hidden rounded-lg border border-line">
          <table className="w-full text-[12.5px]">
            <thead className="bg-surface-2 text-left text-[11px] tracking-wider text-faint uppercase">
              <tr>
                <th className="px-3 py-1.5 font-semibold">Field</th>
                <th className="px-3 py-1.5 font-semibold">Type</th>
                <th className="px-3 py-1.5 font-semibold">Description</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-line">
              {fields.map((f) => (
                <tr key={f.name}>
                  <td className="px-3 py-1.5 font-mono whitespace-nowrap" style={{ paddingLeft: 12 + f.depth * 14 }}>
                    {f.name.split('.').pop()}
                    {f.required ? (
                      <span className="ml-1 text-bad" title="required">
                        *
                      </span>
                    ) : null}
                  </td>
                  <td className="px-3 py-1.5 font-mono text-info">{f.type}</td>
                  <td className="px-3 py-1.5 text-muted">{f.description ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <details className="group">
        <summary className="cursor-pointer text-[12px] text-muted select-none hover:text-fg">Raw JSON schema</summary>
        <JsonView value={schema} className="mt-2" maxHeight={260} label="schema" />
      </details>
    </div>
  );
}
