/**
 * A TypeScript entry of this repository compiled ahead into one JavaScript file, for the workers
 * the engine launches (the console worker, eng-mcp, the worktree worker, the chat roles), for the
 * commands' bin scripts (`runEntry`: eng-mcp, eng-console, eng-worktree) and for the workers tests
 * start. eng-console-worker (it generates its embedded UI module before loading the code that
 * imports it) and eng-chat (it imports its role's module by a computed path) stay on tsx. Plain
 * JavaScript, so that a bin script loads it without tsx; compile.d.mts gives TypeScript its types.
 *
 * Through tsx every start of such a worker transforms and loads its modules one by one: about
 * 1.3 s of CPU on this 2-core machine, and a chat stack is seven of them. The compiled file starts
 * in about half that. It is the same code: esbuild puts the entry, the workspace modules and the
 * npm packages it imports together (but STAY_EXTERNAL; @eng/protocol and @eng/sdk from their built
 * dist/), and each workspace module's `import.meta.url`, `import.meta.dirname`
 * and `import.meta.filename` are written as its own source file's, so the paths a module computes
 * from its location (a package.json, a template folder) are the ones it computes from source.
 *
 * Files go to node_modules/.cache/eng-compiled/, each with the list of the sources that went into
 * it; a file is rebuilt when any of them is newer (or gone), so an edit never runs from an old
 * build. Several processes may build the same entry at once: each writes its own file and renames
 * it into place. Without esbuild (an install without it), `compiledEntry` answers undefined and
 * the caller runs the source through tsx.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Builds started by this process: part of each temporary file's name (two builds of one entry may overlap). */
let builds = 0;

/** Bumped when the way entries are compiled changes: every cached file is rebuilt. */
const FORMAT = 4;

/** @returns {typeof import('esbuild') | undefined} */
function loadEsbuild(root) {
  try {
    return createRequire(join(root, 'package.json'))('esbuild');
  } catch {
    return undefined;
  }
}

/** @param {string} path */
function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** @param {string} out @param {string} manifestPath */
function fresh(out, manifestPath) {
  if (!existsSync(out) || !existsSync(manifestPath)) return false;
  /** @type {{ format: number, inputs: string[] }} */
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.format !== FORMAT || !Array.isArray(manifest.inputs)) return false;
  const built = mtime(out);
  return manifest.inputs.every((input) => mtime(input) < built);
}

/** Each module's import.meta location, written as its source file's. */
/** @returns {import('esbuild').Plugin} */
function sourceLocations() {
  return {
    name: 'eng-source-locations',
    setup(build) {
      build.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, (args) => {
        if (args.path.includes(`${'/'}node_modules${'/'}`)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const contents = text
          .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href))
          .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(dirname(args.path)))
          .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(args.path));
        return { contents, loader: args.path.endsWith('ts') ? 'ts' : 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/**
 * Packages that stay imports: native addons (a .node file cannot be bundled), build tools, browsers,
 * and the optional store clients the engine loads only when configured. Everything else (npm
 * packages, @eng/protocol and @eng/sdk from their dist/) goes into the file: loading a few hundred
 * modules one by one (resolving, reading, linking each; zod alone is over a hundred) was most of a
 * start's CPU, and one copy of each package in the file keeps classes single (an EngError is one
 * class in the process).
 */
export const STAY_EXTERNAL = new Set([
  'better-sqlite3',
  'bufferutil',
  'utf-8-validate',
  'esbuild',
  'tsx',
  'fsevents',
  'playwright',
  'playwright-core',
  '@playwright/test',
  'ioredis',
  'amqplib',
]);

/**
 * CommonJS packages put into an ES module call `require` for node's built-ins (and optional addons
 * inside a try): the file gets a real one, resolving from where the file sits.
 */
export const REQUIRE_BANNER =
  "import { createRequire as __engCreateRequire } from 'node:module'; const require = __engCreateRequire(import.meta.url);";

/** @param {string} specifier */
export function packageName(specifier) {
  return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
}

/** @returns {import('esbuild').Plugin} */
function externals() {
  return {
    name: 'eng-externals',
    setup(build) {
      // a generated module (`generated/*.gen.mjs`: the console worker's embedded UI, 4 MB) is
      // loaded from where it is at run time: its entry writes it before importing it
      build.onResolve({ filter: /(^|\/)generated\/[^/]+\.gen\.mjs$/ }, (args) => ({
        path: pathToFileURL(resolve(args.resolveDir, args.path)).href,
        external: true,
      }));
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || !STAY_EXTERNAL.has(packageName(args.path))) return undefined;
        return { path: args.path, external: true };
      });
    },
  };
}

/**
 * The files whose change makes a build stale: the workspace sources that went in, and for each npm
 * package in it only its folder (made anew when npm installs another version; npm dates the files
 * it unpacks to 1985, so their own times say nothing; stat-ing each of them at every start would
 * also cost more than the build saves).
 * @param {string} root @param {string[]} inputs relative to root, as esbuild's metafile lists them
 */
export function manifestInputs(root, inputs) {
  const files = new Set();
  for (const input of inputs) {
    if (input.startsWith('<')) continue;
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) {
      files.add(resolve(root, input));
      continue;
    }
    const rest = input.slice(at + 'node_modules/'.length);
    files.add(resolve(root, input.slice(0, at), 'node_modules', packageName(rest)));
  }
  return [...files];
}

/**
 * The compiled file of `source` (an absolute path to a .ts entry), built when missing or older than
 * one of its sources (esbuild's async API: it runs plugins only there). Undefined when it cannot
 * be built here: the caller runs the source through tsx.
 * @param {string} source
 * @param {import('./compile.d.mts').CompileOptions} options
 * @returns {Promise<string | undefined>}
 */
export async function compileEntry(source, options) {
  const root = resolve(options.root);
  const cacheDir = join(root, 'node_modules/.cache/eng-compiled');
  const name = relative(root, source)
    .replace(/[\\/]/g, '__')
    .replace(/\.[cm]?[jt]s$/, '');
  const out = join(cacheDir, `${name}${options.callMain ? '.main' : ''}.mjs`);
  const manifestPath = `${out}.json`;
  if (fresh(out, manifestPath)) return out;
  const esbuild = loadEsbuild(root);
  if (!esbuild || !existsSync(source)) return undefined;
  mkdirSync(cacheDir, { recursive: true });
  const unique = `${process.pid}.${Date.now()}.${++builds}`;
  const temp = `${out}.${unique}.tmp.mjs`;
  const entry = options.callMain
    ? {
        stdin: {
          contents: `import { main } from ${JSON.stringify(source)};\nawait main();\n`,
          resolveDir: dirname(source),
          sourcefile: `${name}.main.ts`,
          loader: /** @type {const} */ ('ts'),
        },
      }
    : { entryPoints: [source] };
  try {
    const result = await esbuild.build({
      ...entry,
      outfile: temp,
      absWorkingDir: root,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
      metafile: true,
      banner: { js: REQUIRE_BANNER },
      plugins: [externals(), sourceLocations()],
    });
    const inputs = manifestInputs(root, Object.keys(result.metafile?.inputs ?? {}));
    inputs.push(source);
    const manifest = { format: FORMAT, inputs: [...new Set(inputs)] };
    writeFileSync(`${manifestPath}.${unique}.tmp`, JSON.stringify(manifest));
    renameSync(`${manifestPath}.${unique}.tmp`, manifestPath);
    renameSync(temp, out);
    return out;
  } catch {
    return undefined;
  }
}

/**
 * The repository root above `dir`: the nearest folder whose node_modules holds esbuild (undefined: none).
 * @param {string} dir
 * @returns {string | undefined}
 */
function repositoryRoot(dir) {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules/esbuild/package.json'))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * Run a command's TypeScript entry from a bin script: its compiled file (built first when missing
 * or stale), or the source through tsx when it cannot be compiled here or `ENG_FROM_SOURCE=1`.
 * Compiled, `eng-mcp --version` takes 0.20–0.27 s of CPU (1.33 s through tsx; 0.47–0.59 s while its npm
 * packages stayed imports) on this 2-core machine.
 * @param {URL} entry the entry's file URL
 * @param {{ callMain?: boolean }} [options] call the entry's exported `main()` (a module that runs only as a script)
 */
export async function runEntry(entry, options = {}) {
  const source = fileURLToPath(entry);
  const root = process.env.ENG_FROM_SOURCE === '1' ? undefined : repositoryRoot(dirname(source));
  // a cache that cannot be written (a read-only checkout) runs the source instead
  const compiled = root ? await compileEntry(source, { root, callMain: options.callMain }).catch(() => undefined) : undefined;
  if (compiled) {
    await import(pathToFileURL(compiled).href);
    return;
  }
  const { register } = await import('tsx/esm/api');
  register();
  const module = await import(entry.href);
  if (options.callMain) await module.main();
}
