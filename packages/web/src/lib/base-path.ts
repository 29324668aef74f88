/**
 * The path the UI is served under, ending in `/` (`/` normally, `/console/` behind a reverse
 * proxy). Routes live in the hash, so the document path is the mount point of the server.
 */
export function basePath(): string {
  const path = location.pathname;
  return path.endsWith('/') ? path : path.slice(0, path.lastIndexOf('/') + 1) || '/';
}

/** URL of one of the serving console's own endpoints (`_console/config`, …). */
export function consoleEndpoint(path: string): string {
  return `${basePath()}_console/${path.replace(/^\/+/, '')}`;
}
