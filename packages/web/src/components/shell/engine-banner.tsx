import { RefreshCw, Unplug } from 'lucide-react';
import { useEffect, useState } from 'react';
import { describeOutage, useConnection } from '../../api/client.ts';
import { useServerKind } from '../../api/console-config.ts';
import { FIRST_CONNECT_GRACE_MS } from '../../api/outage.ts';
import { flagsFor } from '../../lib/console-flags.ts';
import { timeAgo } from '../../lib/format.ts';

/**
 * Shown while the engine is out of reach: says where the console looked ("engine unreachable at
 * ws://…", from the proxy's close reason) and that it reconnects by itself (issue 6 §1).
 */
export function EngineBanner() {
  const conn = useConnection();
  // name the flags of the server that serves this page (eng-console's or the console worker's)
  const flags = flagsFor(useServerKind());
  const [now, setNow] = useState(Date.now());
  const down = conn.status !== 'open';
  useEffect(() => {
    if (!down) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [down]);
  // the first connection takes a moment: no banner for a normal start
  if (!down || (conn.status === 'connecting' && now - conn.since < FIRST_CONNECT_GRACE_MS)) return null;
  return (
    <div
      role="status"
      data-testid="engine-banner"
      className="flex items-start gap-3 border-b border-bad/25 bg-bad-soft px-4 py-2.5 text-[13px] text-bad md:px-6"
    >
      <Unplug size={16} className="mt-0.5 shrink-0" />
      <div className="min-w-0 flex-1">
        <p className="font-semibold">{headline(describeOutage(conn))}</p>
        <p className="mt-0.5 text-xs opacity-85">
          Down since {timeAgo(conn.since, now)}. The console reconnects by itself
          {conn.retryInMs !== undefined ? ` (attempt ${conn.attempt})` : ''}; start the engine with{' '}
          <code className="font-mono">eng start</code> or check{' '}
          {flags.bus.map((flag, i) => (
            <span key={flag}>
              {i ? ' / ' : ''}
              <code className="font-mono">{flag}</code>
            </span>
          ))}
          .
        </p>
      </div>
      <RefreshCw size={14} className="mt-0.5 shrink-0 animate-spin opacity-60 [animation-duration:2.5s]" />
    </div>
  );
}

function headline(reason: string): string {
  // the proxy's close reason already reads "engine unreachable at ws://…"
  const text = reason.trim();
  if (/^engine unreachable/i.test(text)) return text.charAt(0).toUpperCase() + text.slice(1);
  return `Engine unreachable: ${text}`;
}
