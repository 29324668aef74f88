// Types of the generated UI module (bundle.gen.mjs, written by scripts/build-bundle.ts and not
// committed). TypeScript resolves this declaration whether or not the module has been generated.
import type { EmbeddedFile } from '../embedded-types.ts';

export declare const BUNDLE_SOURCE: string;
export declare const FILES: readonly EmbeddedFile[];
