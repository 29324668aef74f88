import { createRoute } from '@tanstack/react-router';
import { type LogFilters, RANGE_PRESETS, type RangePreset, SEVERITIES, type Severity } from '../api/logs.ts';
import { num, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** Every Logs filter lives in the URL (console spec §7 item 5), so a filtered view can be shared. */
export function parseLogSearch(s: Record<string, unknown>): LogFilters {
  const raw = Array.isArray(s.severity) ? s.severity.join(',') : (str(s.severity) ?? '');
  const severity = raw
    .split(',')
    .map((v) => v.trim().toUpperCase())
    .filter((v): v is Severity => (SEVERITIES as readonly string[]).includes(v));
  const range = str(s.range);
  return {
    severity: severity.length ? [...new Set(severity)] : undefined,
    range: range === 'custom' || (range !== undefined && range in RANGE_PRESETS) ? (range as RangePreset | 'custom') : undefined,
    from: num(s.from),
    to: num(s.to),
    q: str(s.q),
    trace_id: str(s.trace_id),
    service: str(s.service),
  };
}

export const logsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/logs',
  validateSearch: parseLogSearch,
}).lazy(() => import('./logs.lazy.tsx').then((m) => m.Route));
