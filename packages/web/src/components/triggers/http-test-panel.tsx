import { Plus, Send, Trash2 } from 'lucide-react';
import { useEffect, useMemo, useState } from 'react';
import { useFunctionDetail } from '../../api/functions.ts';
import { type HttpTestResponse, HttpTestUnavailable, useHttpTest } from '../../api/http-test.ts';
import { formatBytes, formatDuration } from '../../lib/format.ts';
import { exampleFromSchema } from '../../lib/json-schema.ts';
import { fillPath, httpConfig, pathParams } from '../../lib/trigger-config.ts';
import { Badge } from '../ui/badge.tsx';
import { Button, IconButton } from '../ui/button.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { Select, TextInput } from '../ui/inputs.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { SectionTabs } from '../ui/tabs.tsx';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Test HTTP trigger (seed 4.1 op 2): method, the path prefilled from the binding with inputs for
 * its parameters, query pairs, a JSON body for POST/PUT/PATCH; the answer's status, headers, body.
 */
export function HttpTestPanel({ config, functionId }: { config: unknown; functionId: string }) {
  const route = httpConfig(config);
  const params = useMemo(() => pathParams(route.path), [route.path]);
  const [method, setMethod] = useState(METHODS.includes(route.method) ? route.method : 'GET');
  const [values, setValues] = useState<Record<string, string>>({});
  const [query, setQuery] = useState<Array<[string, string]>>([['', '']]);
  const detail = useFunctionDetail(functionId);
  const [body, setBody] = useState('{}');
  const [touched, setTouched] = useState(false);
  const test = useHttpTest();

  // prefill the body from the handler's request schema (the HTTP body is its input)
  const schema = detail.data?.request_schema ?? detail.data?.request_format;
  useEffect(() => {
    if (!touched && schema) setBody(JSON.stringify(exampleFromSchema(schema), null, 2));
  }, [schema, touched]);

  const missing = params.filter((p) => !values[p]?.trim());
  const parsed = parseJson(body);
  const hasBody = WITH_BODY.has(method);
  const path = fillPath(route.path, values);
  const send = () => {
    if (missing.length || (hasBody && !parsed.ok)) return;
    test.mutate({ method, path, query, body: hasBody ? body : undefined });
  };

  return (
    <div className="space-y-3" data-testid="http-test-panel">
      <div className="flex gap-2">
        <Select aria-label="HTTP method" value={method} onChange={(e) => setMethod(e.target.value)} className="w-28 font-mono">
          {METHODS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </Select>
        <div
          className="flex h-8 min-w-0 flex-1 items-center gap-1 rounded-lg border border-line bg-surface-2 px-2.5 font-mono text-[12.5px]"
          data-testid="http-test-path"
        >
          <span className="truncate">{path || '/'}</span>
          <CopyButton text={path} label="Copy path" className="ml-auto" />
        </div>
      </div>
      {params.length ? (
        <fieldset className="space-y-1.5">
          <legend className="mb-1 text-[12px] font-medium text-muted">Path parameters</legend>
          {params.map((p) => (
            <div key={p} className="flex items-center gap-2">
              <span className="w-24 shrink-0 truncate font-mono text-[12px] text-muted">:{p}</span>
              <TextInput
                aria-label={`Path parameter ${p}`}
                value={values[p] ?? ''}
                placeholder="required"
                onChange={(e) => setValues({ ...values, [p]: e.target.value })}
              />
            </div>
          ))}
        </fieldset>
      ) : null}
      <fieldset className="space-y-1.5">
        <legend className="mb-1 text-[12px] font-medium text-muted">Query parameters</legend>
        {query.map(([k, v], i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional
          <div key={i} className="flex items-center gap-2">
            <TextInput
              aria-label={`Query key ${i + 1}`}
              placeholder="key"
              value={k}
              onChange={(e) => setQuery(query.map((row, j) => (j === i ? [e.target.value, row[1]] : row)))}
            />
            <TextInput
              aria-label={`Query value ${i + 1}`}
              placeholder="value"
              value={v}
              onChange={(e) => setQuery(query.map((row, j) => (j === i ? [row[0], e.target.value] : row)))}
            />
            <IconButton
              icon={Trash2}
              label="Remove query parameter"
              onClick={() => setQuery(query.length > 1 ? query.filter((_, j) => j !== i) : [['', '']])}
            />
          </div>
        ))}
        <Button size="xs" variant="ghost" icon={Plus} onClick={() => setQuery([...query, ['', '']])}>
          Add parameter
        </Button>
      </fieldset>
      {hasBody ? (
        <div className="space-y-1.5">
          <span className="text-[12px] font-medium text-muted">JSON body</span>
          <JsonEditor
            label="Request body"
            value={body}
            onChange={(next) => {
              setTouched(true);
              setBody(next);
            }}
            onSubmit={send}
            minRows={4}
            maxRows={12}
          />
        </div>
      ) : null}
      <div className="flex items-center gap-2">
        <Button
          variant="primary"
          icon={Send}
          onClick={send}
          loading={test.isPending}
          disabled={missing.length > 0 || (hasBody && !parsed.ok)}
        >
          Send request
        </Button>
        {missing.length ? <span className="text-[12px] text-muted">Fill in {missing.map((m) => `:${m}`).join(', ')}</span> : null}
      </div>
      {test.isError ? (
        test.error instanceof HttpTestUnavailable ? (
          <div className="rounded-lg border border-warn/30 bg-warn-soft px-3 py-2 text-[13px] text-warn" role="status">
            {test.error.message}
          </div>
        ) : (
          <ErrorNote title="The request did not reach the engine" error={test.error} />
        )
      ) : null}
      {test.data ? <HttpResponseView response={test.data} /> : null}
    </div>
  );
}

function statusTone(status: number) {
  if (status >= 500) return 'bad' as const;
  if (status >= 400) return 'warn' as const;
  if (status >= 300) return 'info' as const;
  return 'ok' as const;
}

export function HttpResponseView({ response }: { response: HttpTestResponse }) {
  const [tab, setTab] = useState<'body' | 'headers'>('body');
  return (
    <div className="overflow-hidden rounded-lg border border-line" data-testid="http-test-response">
      <div className="flex flex-wrap items-center gap-2 bg-surface-2 px-3 py-2 text-[12.5px]">
        <Badge tone={statusTone(response.status)} className="text-[12px]">
          <span data-testid="http-test-status">{response.status}</span> {response.statusText}
        </Badge>
        <span className="font-mono text-muted">{response.url}</span>
        <span className="ml-auto text-muted tabular-nums">
          {formatDuration(response.durationMs)} · {formatBytes(new TextEncoder().encode(response.body).length)}
        </span>
      </div>
      <SectionTabs
        label="Response"
        value={tab}
        onChange={setTab}
        items={[
          { value: 'body', label: 'Body' },
          { value: 'headers', label: 'Headers', count: response.headers.length },
        ]}
      />
      <div className="p-3">
        {tab === 'body' ? (
          response.json !== undefined ? (
            <JsonView value={response.json} label="response body" maxHeight={320} />
          ) : response.body ? (
            <pre className="max-h-80 overflow-auto rounded-lg bg-surface-2 p-3 font-mono text-[12px] whitespace-pre-wrap">
              {response.body}
            </pre>
          ) : (
            <p className="text-[13px] text-muted">Empty body.</p>
          )
        ) : (
          <table className="w-full text-[12.5px]" data-testid="http-test-headers">
            <tbody className="divide-y divide-line">
              {response.headers.map(([k, v]) => (
                <tr key={k}>
                  <td className="py-1 pr-3 font-mono whitespace-nowrap text-muted">{k}</td>
                  <td className="py-1 font-mono break-all">{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}
