import { useEffect, useState } from 'react';
import { useLastUpdate } from '../../api/query-client.ts';
import { formatTime, timeAgo } from '../../lib/format.ts';

/** "Updated 3s ago": when the UI last received engine data (seed 2.1 last-update timestamp). */
export function LastUpdate() {
  const at = useLastUpdate();
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => tick((n) => n + 1), 1000);
    return () => window.clearInterval(timer);
  }, []);
  return (
    <span
      className="truncate text-[11.5px] text-faint tabular-nums"
      title={at ? `Last data received at ${formatTime(at)}` : undefined}
      data-testid="last-update"
    >
      {at ? `Updated ${timeAgo(at)}` : 'No data yet'}
    </span>
  );
}
