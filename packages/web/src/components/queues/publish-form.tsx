import { CheckCircle2, Send } from 'lucide-react';
import { useId, useState } from 'react';
import { isSystemFunction, useFunctions } from '../../api/functions.ts';
import { type QueueTopic, usePublish } from '../../api/queues.ts';
import { Button } from '../ui/button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput } from '../ui/inputs.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';
import { Tabs } from '../ui/tabs.tsx';

/**
 * Publish a message: to a durable topic (every `durable:subscriber` gets its copy) or onto a
 * function queue for one function (the enqueue action). A name that is both offers both.
 */
export function PublishForm({ topic, defaultFunction }: { topic: QueueTopic; defaultFunction?: string }) {
  const canTopic = topic.kinds.includes('topic');
  const canQueue = topic.kinds.includes('function_queue');
  const [mode, setMode] = useState<'topic' | 'queue'>(canTopic ? 'topic' : 'queue');
  const [text, setText] = useState('{\n  \n}');
  const [functionId, setFunctionId] = useState(defaultFunction ?? '');
  const publish = usePublish();
  const functions = useFunctions();
  const listId = useId();
  const parsed = parseJson(text);
  const ready = parsed.ok && parsed.value !== undefined && (mode === 'topic' || functionId.trim() !== '');

  const submit = () => {
    if (!ready || !parsed.ok) return;
    publish.mutate(
      mode === 'topic'
        ? { kind: 'topic', topic: topic.name, data: parsed.value }
        : { kind: 'queue', queue: topic.name, function_id: functionId.trim(), data: parsed.value },
    );
  };

  return (
    <div className="space-y-3" data-testid="publish-form">
      {canTopic && canQueue ? (
        <Tabs
          label="Publish to"
          value={mode}
          onChange={(m) => {
            setMode(m);
            publish.reset();
          }}
          items={[
            { value: 'topic', label: 'Topic subscribers' },
            { value: 'queue', label: 'Function queue' },
          ]}
          className="w-fit"
        />
      ) : null}
      <p className="text-[12.5px] text-muted">
        {mode === 'topic' ? (
          <>
            <code className="text-fg">eng::durable::publish</code> gives every subscriber of <b className="font-mono">{topic.name}</b> its
            own copy, with its own retries and dead-letter queue.
          </>
        ) : (
          <>
            The enqueue action stores the message on <b className="font-mono">{topic.name}</b>; the engine then calls the function with it,
            retrying on failure.
          </>
        )}
      </p>
      {mode === 'queue' ? (
        <label htmlFor={`${listId}-fn`} className="block text-[12px] font-medium text-muted">
          Function
          <TextInput
            id={`${listId}-fn`}
            list={listId}
            value={functionId}
            onChange={(e) => setFunctionId(e.target.value)}
            placeholder="fulfilment::ship"
            className="mt-1 font-mono"
          />
          <datalist id={listId}>
            {(functions.data ?? [])
              .filter((f) => !isSystemFunction(f))
              .map((f) => (
                <option key={f.function_id} value={f.function_id} />
              ))}
          </datalist>
        </label>
      ) : null}
      <JsonEditor label="Message data" value={text} onChange={setText} onSubmit={submit} minRows={5} maxRows={14} />
      <div className="flex items-center gap-3">
        <Button
          variant="primary"
          size="sm"
          icon={Send}
          disabled={!ready}
          loading={publish.isPending}
          onClick={submit}
          data-testid="publish"
        >
          {mode === 'topic' ? 'Publish' : 'Enqueue'}
        </Button>
        {publish.isSuccess ? (
          <span className="inline-flex items-center gap-1.5 text-[12.5px] text-ok" role="status">
            <CheckCircle2 size={14} />
            {publish.data?.messageReceiptId ? (
              <>
                Enqueued · receipt <code className="font-mono">{publish.data.messageReceiptId}</code>
              </>
            ) : (
              'Published'
            )}
          </span>
        ) : null}
      </div>
      {publish.error ? <ErrorNote title="Not published" error={publish.error} /> : null}
    </div>
  );
}
