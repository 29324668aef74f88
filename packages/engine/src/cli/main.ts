#!/usr/bin/env node
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
await import('./program.ts');
