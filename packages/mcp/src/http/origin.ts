// spec: MCP transports/streamable-http §security (servers MUST validate Origin; 2025-11-25: an
// invalid Origin → 403) and security_best_practices (DNS rebinding): a page on evil.example.com
// that resolves to 127.0.0.1 sends `Host` and `Origin` naming evil.example.com, so both are checked
// against loopback names plus what the operator allowed (config `allowed_hosts` / `allowed_origins`).

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function isLoopback(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return LOOPBACK.has(name) || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name);
}

/** `host:port` / `[v6]:port` → hostname. */
function hostnameOf(host: string): string {
  const trimmed = host.trim();
  if (trimmed.startsWith('[')) return trimmed.slice(0, trimmed.indexOf(']') + 1);
  const colon = trimmed.lastIndexOf(':');
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}

/** Why the request must be refused, or undefined when Host and Origin are acceptable. */
export function checkOrigin(
  headers: Record<string, string>,
  allowed: { allowedHosts: string[]; allowedOrigins: string[] },
): string | undefined {
  const host = headers.host;
  if (host !== undefined && host !== '') {
    const ok = isLoopback(hostnameOf(host)) || allowed.allowedHosts.some((h) => h === host || h === hostnameOf(host));
    if (!ok) return `invalid Host header: ${host}`;
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined; // non-browser clients send none
  if (allowed.allowedOrigins.includes(origin) || allowed.allowedOrigins.includes('*')) return undefined;
  let hostname: string;
  try {
    hostname = new URL(origin).hostname;
  } catch {
    return `invalid Origin header: ${origin}`;
  }
  return isLoopback(hostname) ? undefined : `invalid Origin header: ${origin}`;
}
