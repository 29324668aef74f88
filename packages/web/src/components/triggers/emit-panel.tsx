import { Send } from 'lucide-react';
import { useState } from 'react';
import { usePublishEvent } from '../../api/events.ts';
import { formatTime } from '../../lib/format.ts';
import { topicOf } from '../../lib/trigger-config.ts';
import { Button } from '../ui/button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { TextInput } from '../ui/inputs.tsx';
import { JsonEditor, parseJson } from '../ui/json-editor.tsx';

/**
 * Emit (seed 4.1 op 4): publishes the event for real with `publish {topic, data}`, so every
 * subscriber of the topic runs (the reference called an endpoint nobody served, console spec §7.1).
 */
export function EmitPanel({ config }: { config: unknown }) {
  const [topic, setTopic] = useState(topicOf(config));
  const [payload, setPayload] = useState('{\n  "test": true\n}');
  const publish = usePublishEvent();
  const parsed = parseJson(payload);
  const emit = () => {
    if (!parsed.ok || !topic.trim()) return;
    publish.mutate({ topic: topic.trim(), data: parsed.value === undefined ? null : parsed.value });
  };
  return (
    <div className="space-y-3" data-testid="emit-panel">
      <div className="space-y-1">
        <span className="text-[12px] font-medium text-muted">Event (topic)</span>
        <TextInput aria-label="Event topic" value={topic} onChange={(e) => setTopic(e.target.value)} className="font-mono" />
      </div>
      <div className="space-y-1">
        <span className="text-[12px] font-medium text-muted">Payload</span>
        <JsonEditor label="Event payload" value={payload} onChange={setPayload} onSubmit={emit} minRows={4} maxRows={12} />
      </div>
      <div className="flex items-center gap-2">
        <Button variant="primary" icon={Send} onClick={emit} loading={publish.isPending} disabled={!parsed.ok || !topic.trim()}>
          Emit
        </Button>
        <span className="text-[12px] text-muted">Every subscriber of this topic receives it, not only this trigger.</span>
      </div>
      {publish.isError ? <ErrorNote title="Publishing failed" error={publish.error} /> : null}
      {publish.data ? (
        <p className="text-[13px] text-ok" data-testid="emit-result">
          Published to <span className="font-mono">{publish.data.topic}</span> at {formatTime(publish.data.at, true)}.
        </p>
      ) : null}
    </div>
  );
}
