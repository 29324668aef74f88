/**
 * DNS-rebinding rule shared by eng-console and the console worker. A page on evil.example whose
 * name was rebound to 127.0.0.1 is "same origin" with itself (Origin and Host both say
 * evil.example), so the Origin check alone lets it in; on a loopback bind the Host must therefore
 * name loopback too. A server the user bound elsewhere (a LAN address, 0.0.0.0) is reached under
 * names it cannot know, and accepts any Host; the same-origin check still applies there.
 */

/** `127.0.0.1`, `::1`, `localhost` (and `*.localhost`), with or without brackets. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Host header without its port (IPv6 literals keep their brackets off). */
export function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  if (hostHeader.startsWith('[')) return hostHeader.slice(1, hostHeader.indexOf(']'));
  return hostHeader.split(':')[0];
}

/** True when a request with this `Host` header may be served by a server bound to `bindHost`. */
export function hostAllowed(bindHost: string, hostHeader: string | undefined): boolean {
  return !isLoopbackHost(bindHost) || isLoopbackHost(hostnameOf(hostHeader));
}
