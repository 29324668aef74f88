import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the UI bundle is: `ENG_CONSOLE_WEB_DIR`, else @eng/web's `dist/`, built on the spot when
 * missing or older than its sources (`ENG_CONSOLE_SKIP_BUILD=1` serves an existing bundle as is).
 */
export async function resolveWebDir(log: (line: string) => void): Promise<string> {
  const override = process.env.ENG_CONSOLE_WEB_DIR;
  if (override) {
    if (!existsSync(join(override, 'index.html'))) throw new Error(`ENG_CONSOLE_WEB_DIR=${override} has no index.html`);
    return override;
  }
  const { ensureWebBuild, DIST_DIR } = await import('@eng/web/build');
  const skip = /^(1|true|yes)$/i.test(process.env.ENG_CONSOLE_SKIP_BUILD ?? '');
  try {
    ensureWebBuild({ onlyIfMissing: skip, log });
  } catch (err) {
    // a half-edited source must not keep the console down when a working bundle exists
    if (!existsSync(join(DIST_DIR, 'index.html'))) throw err;
    log(`rebuilding the UI failed; serving the previous bundle (${(err as Error).message.split('\n')[0]})`);
  }
  return DIST_DIR;
}
