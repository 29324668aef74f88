// Types of the generated UI module (bundle.gen.ts, written by scripts/build-bundle.ts and not
// committed). TypeScript resolves this declaration when the module has not been generated yet.
import type { EmbeddedFile } from '../embedded-types.ts';

export declare const BUNDLE_SOURCE: string;
export declare const FILES: readonly EmbeddedFile[];
