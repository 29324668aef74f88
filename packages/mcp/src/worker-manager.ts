import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Log } from './log.ts';
import { nodeWorkerSource, pythonWorkerSource, type WorkerSource } from './worker-templates.ts';

// spec: mcp.md §7 (eng_worker_register / eng_worker_stop) — spawn, track, stop and clean up
// workers written from source. Only workers spawned by this process are known.

export type Language = 'node' | 'python';

const LANGUAGES: Record<string, Language> = { node: 'node', javascript: 'node', js: 'node', python: 'python', py: 'python' };
const STDERR_TAIL = 4096;
const STOP_GRACE_MS = 2000;

export function languageOf(value: string): Language | undefined {
  return LANGUAGES[value.toLowerCase()];
}

const require = createRequire(import.meta.url);

/** The @eng/sdk package directory, linked into each Node worker's node_modules so the import resolves. */
function sdkPackageDir(): string {
  let dir = dirname(require.resolve('@eng/sdk'));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== '@eng/sdk') {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot locate the @eng/sdk package');
    dir = parent;
  }
  return dir;
}

const TSX_IMPORT = pathToFileURL(require.resolve('tsx')).href;
const PYTHON_RUNTIME = join(dirname(fileURLToPath(import.meta.url)), 'python', 'eng_worker.py');

export interface SpawnedWorker {
  id: string;
  language: Language;
  functionId: string;
  dir: string;
  child: ChildProcess;
  exited?: { code: number | null; signal: NodeJS.Signals | null };
  stderr: string;
}

export class WorkerManager {
  private readonly workers = new Map<string, SpawnedWorker>();

  constructor(
    private readonly engineUrl: string,
    private readonly log: Log,
    /** Told when a worker ends on its own (not through stop()). */
    private readonly onExit: (worker: SpawnedWorker) => void = () => {},
  ) {}

  /** Write the worker's files and start it. Throws with a readable message; nothing is left behind on failure. */
  spawn(language: Language, source: WorkerSource): SpawnedWorker {
    const id = `worker-${randomUUID()}`;
    const dir = join(tmpdir(), `eng-${id}`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new Error(`Failed to create temp dir: ${(err as Error).message}`);
    }
    let command: string;
    let args: string[];
    try {
      if (language === 'node') {
        mkdirSync(join(dir, 'node_modules', '@eng'), { recursive: true });
        symlinkSync(sdkPackageDir(), join(dir, 'node_modules', '@eng', 'sdk'), 'dir');
        writeFileSync(join(dir, 'index.mjs'), nodeWorkerSource(source));
        command = process.execPath;
        args = ['--import', TSX_IMPORT, join(dir, 'index.mjs')];
      } else {
        copyFileSync(PYTHON_RUNTIME, join(dir, 'eng_worker.py'));
        writeFileSync(join(dir, 'main.py'), pythonWorkerSource(source));
        command = 'python3';
        args = ['-u', join(dir, 'main.py')];
      }
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`Failed to write worker file: ${(err as Error).message}`);
    }
    const child = spawn(command, args, {
      cwd: dir,
      env: { ...process.env, ENG_URL: this.engineUrl, ENG_WORKER_NAME: `mcp-${id}`, ENG_MCP_PARENT_PID: String(process.pid) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const worker: SpawnedWorker = { id, language, functionId: source.functionId, dir, child, stderr: '' };
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      worker.stderr = (worker.stderr + text).slice(-STDERR_TAIL);
      for (const line of text.split('\n')) if (line.trim()) this.log.warn(`[${id}] ${line}`);
    });
    child.on('error', (err) => {
      worker.stderr += `\n${err.message}`;
      worker.exited ??= { code: null, signal: null };
    });
    child.on('exit', (code, signal) => {
      worker.exited = { code, signal };
      this.log.info(`worker ${id} (${source.functionId}) exited`, { code, signal });
      if (this.workers.has(id)) this.onExit(worker);
    });
    this.workers.set(id, worker);
    this.log.info(`spawned ${language} worker ${id} for ${source.functionId}`, { dir });
    return worker;
  }

  get(id: string): SpawnedWorker | undefined {
    return this.workers.get(id);
  }

  list(): SpawnedWorker[] {
    return [...this.workers.values()];
  }

  /** SIGTERM, then SIGKILL after a grace period; the directory goes too. False when the id is unknown. */
  async stop(id: string): Promise<boolean> {
    const worker = this.workers.get(id);
    if (!worker) return false;
    this.workers.delete(id);
    if (!worker.exited) {
      const exited = new Promise<void>((resolve) => worker.child.once('exit', () => resolve()));
      worker.child.kill('SIGTERM');
      const timer = setTimeout(() => worker.child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(worker.dir, { recursive: true, force: true });
    return true;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.workers.keys()].map((id) => this.stop(id)));
  }

  /** Synchronous last resort from process 'exit': kill every child and remove its files. */
  killAllNow(): void {
    for (const worker of this.workers.values()) {
      if (!worker.exited) worker.child.kill('SIGKILL');
      rmSync(worker.dir, { recursive: true, force: true });
    }
    this.workers.clear();
  }
}
