import type { ConnectOptions, RuntimeInfo } from './types.ts';
import { SDK_VERSION } from './version.ts';

/** Strip control and bidi characters and cut to 280 characters, as iii-sdk 0.22.1 does (spec §4.2). */
function sanitise(text: string | undefined): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text?.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '').slice(0, 280);
}

/**
 * Input of `engine::workers::register` (spec §4.2). The engine lists a bus worker only once it
 * has reported a pid (§4.1), which browsers do not have.
 */
export function workerInfo(options: ConnectOptions, runtime: RuntimeInfo): Record<string, unknown> {
  return {
    runtime: runtime.runtime,
    version: SDK_VERSION,
    name: sanitise(options.name ?? runtime.defaultName()),
    description: sanitise(options.description),
    os: runtime.os(),
    pid: runtime.pid(),
  };
}
