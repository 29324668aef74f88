#!/usr/bin/env node
// Runs the TypeScript entry compiled ahead (packages/engine/scripts/compile.mjs: rebuilt whenever a
// source is newer), or through tsx where it cannot be compiled or ENG_FROM_SOURCE=1.
import { runEntry } from '../../engine/scripts/compile.mjs';

await runEntry(new URL('../src/main.ts', import.meta.url));
