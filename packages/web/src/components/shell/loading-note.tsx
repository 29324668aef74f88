import { CloudOff } from 'lucide-react';
import { useEngineDown } from '../../api/outage.ts';
import { cn } from '../ui/cn.ts';
import { Spinner } from '../ui/spinner.tsx';

/**
 * "Loading functions…" — or, while the engine is unreachable, that the page waits for it (issue 19
 * §5): a page opened during an outage has no data yet and must not look like an empty engine.
 */
export function LoadingNote({ what, className }: { what: string; className?: string }) {
  const down = useEngineDown();
  return (
    <div
      className={cn('flex items-center justify-center gap-2 px-4 py-6 text-[13px] text-muted', className)}
      data-testid={down ? 'waiting-for-engine' : undefined}
    >
      {down ? (
        <>
          <CloudOff size={15} className="text-warn" aria-hidden="true" />
          Engine unreachable: {what} will load when the engine is back.
        </>
      ) : (
        <>
          <Spinner /> Loading {what}…
        </>
      )}
    </div>
  );
}
