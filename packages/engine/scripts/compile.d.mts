// Types of compile.mjs (plain JavaScript, so that bin scripts load it without tsx).

export interface CompileOptions {
  /** The repository root (the cache is under its node_modules). */
  root: string;
  /** Call the entry's exported `main()` after loading it (a module that runs only as a script). */
  callMain?: boolean;
}

/**
 * The compiled file of `source` (an absolute path to a .ts entry), built when missing or older than
 * one of its sources. Undefined when it cannot be built here: the caller runs the source through tsx.
 */
export function compileEntry(source: string, options: CompileOptions): Promise<string | undefined>;

/** Run a command's TypeScript entry from a bin script: compiled, or through tsx when it cannot be. */
export function runEntry(entry: URL, options?: { callMain?: boolean }): Promise<void>;

/** Packages that stay imports in a compiled file (native addons, build tools, optional store clients). */
export const STAY_EXTERNAL: ReadonlySet<string>;

/** The banner that gives a compiled ES module a real `require` (for the CommonJS packages in it). */
export const REQUIRE_BANNER: string;

/** `@scope/name` or `name` of an import specifier. */
export function packageName(specifier: string): string;

/** The files whose change makes a build stale (an npm package counts by its folder). */
export function manifestInputs(root: string, inputs: string[]): string[];
