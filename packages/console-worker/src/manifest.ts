import { DEFAULT_HTTP_PORT } from './config.ts';
import { WORKER_VERSION } from './version.ts';

/** The publish manifest `--manifest` prints (console-worker spec §1.4: five required fields). */
export interface WorkerManifest {
  name: string;
  version: string;
  description: string;
  default_config: { http_port: number };
  supported_targets: string[];
}

export const WORKER_DESCRIPTION = 'Web console for eng — bundles the React UI and proxies the engine WebSocket on a single port.';

/** Rust-style target triples, the names worker registries use (the reference reads them from `TARGET`). */
const TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-gnu',
  'linux-arm64': 'aarch64-unknown-linux-gnu',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

export function currentTarget(platform: string = process.platform, arch: string = process.arch): string {
  return TRIPLES[`${platform}-${arch}`] ?? `${arch}-${platform}`;
}

export function manifest(): WorkerManifest {
  return {
    name: 'console',
    version: WORKER_VERSION,
    description: WORKER_DESCRIPTION,
    default_config: { http_port: DEFAULT_HTTP_PORT },
    supported_targets: [currentTarget()],
  };
}
