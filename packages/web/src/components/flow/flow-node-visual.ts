import { Clock, Code, Database, Globe, List, type LucideIcon, Webhook, Zap } from 'lucide-react';
import type { FlowKind } from '../../lib/flow-kinds.ts';

/** Seed table 2.8 visuals: HTTP coloured by method, cron clock, event lightning, function code, state database, queue list. */
export const KIND_VISUAL: Record<FlowKind, { icon: LucideIcon; caption: string; color: string }> = {
  http: { icon: Globe, caption: 'HTTP trigger', color: 'var(--c-info)' },
  cron: { icon: Clock, caption: 'Cron trigger', color: 'var(--c-warn)' },
  event: { icon: Zap, caption: 'Event trigger', color: 'var(--c-violet)' },
  function: { icon: Code, caption: 'Function', color: 'var(--c-accent)' },
  state: { icon: Database, caption: 'State', color: 'var(--c-ok)' },
  queue: { icon: List, caption: 'Queue', color: 'var(--c-warn)' },
  trigger: { icon: Webhook, caption: 'Trigger', color: 'var(--c-faint)' },
};

/** Method colours, in the palette both themes define. */
export function methodColor(method: string | undefined): string {
  switch (method) {
    case 'GET':
      return 'var(--c-ok)';
    case 'POST':
      return 'var(--c-info)';
    case 'PUT':
    case 'PATCH':
      return 'var(--c-warn)';
    case 'DELETE':
      return 'var(--c-bad)';
    default:
      return 'var(--c-violet)';
  }
}
