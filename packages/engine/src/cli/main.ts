#!/usr/bin/env node
import { pathToFileURL } from 'node:url';
import { ensurePackagesBuilt } from '@eng/sdk/build';

// @eng/protocol and @eng/sdk run from their built dist/ (plain-`node` workers import them too): in
// a checkout, rebuild them first when their sources changed (a few seconds, once), before the
// engine or a worker it launches loads an old build. Nothing here may import either package.
try {
  ensurePackagesBuilt({ log: (line: string) => process.stderr.write(`eng: ${line}\n`) });
} catch (err) {
  process.stderr.write(`eng: ${(err as Error).message}\n`);
  process.exit(1);
}

// the engine runs compiled ahead into one file (scripts/bundle.ts: rebuilt when a source is newer;
// about 0.76 s of CPU to start instead of 1.95 s through tsx); ENG_FROM_SOURCE=1 runs the sources
let bundle: string | undefined;
if (process.env.ENG_FROM_SOURCE !== '1') {
  try {
    bundle = await (await import('../../scripts/bundle.ts')).ensureEngineBundle();
  } catch (err) {
    process.stderr.write(`eng: running from the sources (the engine could not be compiled: ${(err as Error).message})\n`);
  }
}
if (bundle) await import(pathToFileURL(bundle).href);
else await import('./program.ts');
