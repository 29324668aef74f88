import type { ReactNode } from 'react';
import { StaleMarker } from '../shell/stale-marker.tsx';

/** Title row of a page: title, one-line description, actions on the right, optional toolbar below. */
export function PageHeader({
  title,
  description,
  actions,
  children,
  badge,
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children?: ReactNode;
  badge?: ReactNode;
}) {
  return (
    <div className="border-b border-line bg-surface/60 px-4 pt-4 pb-3 md:px-6">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <div className="flex flex-wrap items-center gap-2">
            <h1 className="text-lg font-semibold tracking-tight text-fg">{title}</h1>
            {badge}
            {/* while the engine is down, what this page shows is its last known data */}
            <StaleMarker />
          </div>
          {description ? <p className="mt-0.5 text-[13px] text-muted">{description}</p> : null}
        </div>
        {actions ? <div className="flex flex-wrap items-center gap-2">{actions}</div> : null}
      </div>
      {children ? <div className="mt-3 flex flex-wrap items-center gap-2">{children}</div> : null}
    </div>
  );
}
