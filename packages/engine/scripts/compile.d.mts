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
