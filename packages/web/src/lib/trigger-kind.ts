import type { Tone } from '../components/ui/badge.tsx';

/**
 * Trigger kinds for grouping and filter tabs (seed 2.3: HTTP, CRON, QUEUE … with count badges).
 * A type the console does not know (a worker's custom trigger type) is `other`.
 */
export type TriggerKind = 'http' | 'cron' | 'event' | 'queue' | 'state' | 'stream' | 'log' | 'engine' | 'other';

export const KIND_ORDER: TriggerKind[] = ['http', 'cron', 'event', 'queue', 'state', 'stream', 'log', 'engine', 'other'];

export const KIND_LABEL: Record<TriggerKind, string> = {
  http: 'HTTP',
  cron: 'Cron',
  event: 'Event',
  queue: 'Queue',
  state: 'State',
  stream: 'Stream',
  log: 'Log',
  engine: 'Engine',
  other: 'Other',
};

export function kindOf(type: string): TriggerKind {
  if (type === 'http' || type === 'api') return 'http';
  if (type === 'cron') return 'cron';
  if (type === 'subscribe' || type === 'event') return 'event';
  if (type === 'queue' || type.startsWith('durable:') || type.includes('queue')) return 'queue';
  if (type === 'state' || type.startsWith('state:')) return 'state';
  if (type === 'stream' || type.startsWith('stream:') || type.startsWith('stream::')) return 'stream';
  if (type === 'log' || type.startsWith('log')) return 'log';
  if (type.startsWith('engine::')) return 'engine';
  return 'other';
}

export function kindTone(kind: TriggerKind): Tone {
  switch (kind) {
    case 'http':
      return 'info';
    case 'cron':
      return 'warn';
    case 'event':
      return 'violet';
    case 'queue':
      return 'accent';
    case 'state':
    case 'stream':
      return 'ok';
    default:
      return 'neutral';
  }
}

export function triggerTone(type: string): Tone {
  return kindTone(kindOf(type));
}
