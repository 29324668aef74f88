/** Reading the config of the trigger types the console knows (engine-protocol §5). */
export interface HttpConfig {
  path: string;
  method: string;
}

function obj(config: unknown): Record<string, unknown> {
  return config && typeof config === 'object' ? (config as Record<string, unknown>) : {};
}

export function httpConfig(config: unknown): HttpConfig {
  const c = obj(config);
  const raw = String(c.api_path ?? c.path ?? '');
  return { path: `/${raw.replace(/^\/+/, '')}`, method: String(c.http_method ?? c.method ?? 'GET').toUpperCase() };
}

export function cronExpression(config: unknown): string {
  return String(obj(config).expression ?? '');
}

export function topicOf(config: unknown): string {
  const c = obj(config);
  return String(c.topic ?? c.event ?? c.queue ?? '');
}

/** `:id` and `{id}` segments of an HTTP path. */
export function pathParams(path: string): string[] {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    const m = /^:(.+)$/.exec(segment) ?? /^\{(.+)\}$/.exec(segment);
    if (m?.[1] && !out.includes(m[1])) out.push(m[1]);
  }
  return out;
}

export function fillPath(path: string, values: Record<string, string>): string {
  return path
    .split('/')
    .map((segment) => {
      const m = /^:(.+)$/.exec(segment) ?? /^\{(.+)\}$/.exec(segment);
      return m?.[1] ? encodeURIComponent(values[m[1]] ?? '') : segment;
    })
    .join('/');
}

/** One line for the Path / Config column (seed 2.3). */
export function summarise(type: string, config: unknown, fallback: string): string {
  if (type === 'http' || type === 'api') {
    const h = httpConfig(config);
    return `${h.method} ${h.path}`;
  }
  if (type === 'cron') return cronExpression(config) || fallback;
  const c = obj(config);
  if (typeof c.topic === 'string') return c.topic;
  if (typeof c.scope === 'string') return `scope ${c.scope}${typeof c.key === 'string' ? ` / ${c.key}` : ''}`;
  if (typeof c.stream_name === 'string') return `${c.stream_name}${typeof c.group_id === 'string' ? ` / ${c.group_id}` : ''}`;
  if (Object.keys(c).length === 0) {
    // no filter in the config: the trigger fires for all of them
    if (type === 'state') return 'every scope';
    if (type === 'stream' || type === 'stream:join' || type === 'stream:leave') return 'every stream';
    return '—';
  }
  return fallback;
}
