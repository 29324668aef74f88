#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx (no build step), like packages/engine/bin/eng.js.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
await main();
