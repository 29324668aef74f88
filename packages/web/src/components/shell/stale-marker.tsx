import { CloudOff } from 'lucide-react';
import { staleLabel, useEngineDown } from '../../api/outage.ts';
import { useLastUpdate } from '../../api/query-client.ts';
import { formatDateTime, formatTime } from '../../lib/format.ts';

/**
 * Beside every page title while the engine is unreachable: the data below is the last the console
 * received, "as of 12:03:04" (issue 19 §5). Gone as soon as the engine is back.
 */
export function StaleMarker() {
  const down = useEngineDown();
  const at = useLastUpdate();
  if (!down) return null;
  return (
    <span
      role="status"
      data-testid="stale-marker"
      data-as-of={at || ''}
      title={
        at ? `The data on this page was received at ${formatDateTime(at)}; it refreshes by itself when the engine is back.` : undefined
      }
      className="inline-flex h-6 items-center gap-1.5 rounded-md border border-warn/35 bg-warn-soft px-2 text-[12px] font-medium whitespace-nowrap text-warn"
    >
      <CloudOff size={13} aria-hidden="true" />
      {staleLabel(at, formatTime)}
    </span>
  );
}
