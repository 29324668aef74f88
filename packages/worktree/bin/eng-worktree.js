#!/usr/bin/env node
// Runs the TypeScript entry directly through tsx (no build step), like packages/mcp/bin/eng-mcp.js.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
