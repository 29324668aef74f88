#!/usr/bin/env node
// Runs the TypeScript entry compiled ahead (packages/engine/scripts/compile.mjs: rebuilt whenever a
// source is newer), or through tsx where it cannot be compiled or ENG_FROM_SOURCE=1. Either way the
// entry writes the embedded UI module (src/generated/bundle.gen.mjs) first when it is missing or stale.
import { runEntry } from '../../engine/scripts/compile.mjs';

await runEntry(new URL('../src/main.ts', import.meta.url));
