import { type LucideIcon, WifiOff } from 'lucide-react';
import { useFunctions } from '../../api/functions.ts';
import { useEngineDown } from '../../api/outage.ts';
import { SURFACES, type Surface, usePresence } from '../../api/presence.ts';
import { EmptyState } from '../ui/empty-state.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { InstallNotice } from './install-notice.tsx';

/**
 * The frame of a presence-gated page: the install notice while the worker is absent, the page
 * once it is connected. `children` is the surface itself; until the surface is built it lists
 * what the connected worker offers. Presence outlives an outage (api/presence.ts): a page that
 * was there stays, with its last known state; one first opened while the engine is unreachable
 * says it waits for the engine rather than spinning or asking for an install.
 */
export function GatedPage({
  surface,
  title,
  description,
  icon,
  children,
  fill,
}: {
  surface: Surface;
  title: string;
  description: string;
  icon: LucideIcon;
  children?: React.ReactNode;
  /** The page fills the height below its header (a canvas). */
  fill?: boolean;
}) {
  const presence = usePresence();
  const down = useEngineDown();
  return (
    <div
      data-testid={`gated-${surface}`}
      data-present={presence.known ? String(presence[surface]) : 'unknown'}
      className={fill ? 'flex h-full min-h-0 flex-col' : undefined}
    >
      <PageHeader title={title} description={description} />
      {!presence.known && down ? (
        <EmptyState icon={WifiOff} title="Engine unreachable" className="mx-auto">
          <span data-testid="waiting-for-engine">
            {title} appears when the engine is back: whether its worker is connected is not known yet.
          </span>
        </EmptyState>
      ) : !presence.known ? (
        <div className="flex justify-center py-16">
          <Spinner />
        </div>
      ) : presence[surface] ? (
        (children ?? <WorkerFunctions surface={surface} icon={icon} title={title} />)
      ) : (
        <InstallNotice surface={surface} title={title} />
      )}
    </div>
  );
}

function WorkerFunctions({ surface, icon, title }: { surface: Surface; icon: LucideIcon; title: string }) {
  const { data } = useFunctions();
  const ids = (data ?? []).map((f) => f.function_id).filter((id) => SURFACES[surface].prefixes.some((p) => id.startsWith(p)));
  return (
    <EmptyState icon={icon} title={`The ${SURFACES[surface].worker} is connected`}>
      <p>
        {title} runs on these functions; its screens arrive with the {SURFACES[surface].worker}'s own release.
      </p>
      <ul className="mt-2 font-mono text-xs text-fg">
        {ids.slice(0, 12).map((id) => (
          <li key={id}>{id}</li>
        ))}
        {ids.length > 12 ? <li>… {ids.length - 12} more</li> : null}
      </ul>
    </EmptyState>
  );
}
