import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { type EngineProcess, engArgs, freePort, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { BUILTIN_MODULES } from '../src/modules/index.ts';

const ENG_BIN = join(REPO_ROOT, 'packages/engine/bin/eng.js');

function eng(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, engArgs(args), {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_HOME: join(tmpdir(), 'eng-cli-home-unused'), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `eng` without blocking the test's event loop (for tests that keep sockets of their own open). */
function engAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, engArgs(args), {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_HOME: join(tmpdir(), 'eng-cli-home-unused') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    }),
  );
}

describe('eng --help and --version', () => {
  it('prints usage for every command', () => {
    const top = eng(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Usage: eng/);
    for (const command of ['start', 'trigger', 'worker', 'worker add', 'worker remove', 'worker list']) {
      const r = eng([...command.split(' '), '--help']);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toMatch(/Usage: eng/);
    }
    // seven CLI processes one after another (about a second each on a quiet machine)
  }, 90_000);

  it('prints the version', () => {
    const r = eng(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('says in the top-level help that eng without a command starts the engine, and lists the commands', () => {
    const r = eng(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Without a command, starts the engine/);
    expect(r.stdout).toMatch(/start \[options\]\s+start the engine \(the default command\)/);
    for (const command of ['trigger', 'worker', 'console']) expect(r.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    expect(r.stderr).toBe('');
  });

  it('prints the same version from every command, with --version and -v, without running the command', () => {
    const version = eng(['--version']).stdout;
    const cases = [
      ...['start', 'trigger', 'worker', 'worker add', 'worker remove', 'worker list', 'console'].map((c) => `${c} --version`),
      'start -v',
      'worker add -v',
    ];
    for (const args of cases) {
      const r = eng(args.split(' '));
      expect(r.code, args).toBe(0);
      expect(r.stdout, args).toBe(version);
      expect(r.stderr, args).toBe('');
    }
  }, 60_000);

  it('rejects an unknown command with a hint', () => {
    const r = eng(['frobnicate']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown command|too many arguments|--help/);
  });
});

describe('eng without a command', () => {
  it('starts the engine from ./config.yaml, prints its addresses and stops cleanly on SIGTERM', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'eng-bare-'));
    const port = await freePort();
    writeFileSync(join(cwd, 'config.yaml'), `workers:\n  - name: eng-worker-manager\n    config:\n      port: ${port}\n`);
    const child = spawn(process.execPath, [ENG_BIN], {
      cwd,
      env: { ...process.env, ENG_CONFIG: '', ENG_HOME: join(cwd, 'home'), ENG_DATA_DIR: join(cwd, 'data') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /^eng: ready /m.test(stdout), 20_000);
      expect(stdout).toMatch(/engine running/);
      expect(stdout).toContain(`worker bus  ws://127.0.0.1:${port}`);
      const ready = JSON.parse(/^eng: ready (.*)$/m.exec(stdout)?.[1] as string);
      expect(ready.bus.url).toBe(`ws://127.0.0.1:${port}`);
      // it is a real engine: a worker connects and is greeted
      const client = await RawClient.worker(`ws://127.0.0.1:${port}`);
      expect((await client.result('engine::functions::list', { include_internal: true })).functions.length).toBeGreaterThan(0);
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

describe('eng start with a broken config', () => {
  it('exits 2 and names the entry and key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'workers:\n  - name: eng-worker-manager\n    config:\n      port: "not a port"\n');
    const r = eng(['start', '-c', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('configuration error');
    expect(r.stderr).toMatch(/workers\[0\] \(eng-worker-manager\): config\.port/);
  });
});

describe('eng worker add|remove|list', () => {
  it('adds a console block once (idempotent), lists it, and removes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, '# my engine\nworkers:\n  - name: eng-worker-manager # the bus\n');
    const first = eng(['worker', 'add', 'console', '-c', file]);
    expect(first.code).toBe(0);
    const second = eng(['worker', 'add', 'console', '-c', file]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/already configured/);
    const text = readFileSync(file, 'utf8');
    expect(text.match(/name: console/g)?.length).toBe(1);
    expect(text).toContain('http_port: 3113');
    expect(text).toContain('# the bus'); // comments survive edits
    const list = eng(['worker', 'list', '-c', file, '--json']);
    expect(JSON.parse(list.stdout).workers.map((w: { name: string }) => w.name)).toEqual(['eng-worker-manager', 'console']);
    expect(eng(['worker', 'remove', 'console', '-c', file]).code).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toContain('console');
  });

  it('writes to the user configuration file when no --config is given', () => {
    const home = mkdtempSync(join(tmpdir(), 'eng-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'eng-cwd-'));
    const result = spawnSync(process.execPath, engArgs(['worker', 'add', 'mcp']), {
      cwd,
      env: { ...process.env, ENG_HOME: home, ENG_CONFIG: '' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(readFileSync(join(home, 'config.yaml'), 'utf8')).toContain('name: mcp');
  });

  it('remove of a name that is not configured says so, exits 0 and leaves the file untouched', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const file = join(dir, 'config.yaml');
    const text = '# keep me\nworkers:\n  - name: eng-worker-manager # the bus\n';
    writeFileSync(file, text);
    const r = eng(['worker', 'remove', 'console', '-c', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`console is not configured in ${file}\n`);
    expect(r.stderr).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('remove without a configuration file exits 1 and names the missing file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const file = join(dir, 'absent.yaml');
    const r = eng(['worker', 'remove', 'console', '-c', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`eng: no configuration file at ${file}\n`);
  });

  it('refuses an unknown worker name and lists the known ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const r = eng(['worker', 'add', 'nonsense', '-c', join(dir, 'c.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unknown worker "nonsense"; known workers: console, mcp/);
    expect(r.stderr).toContain('pass --command');
    expect(existsSync(join(dir, 'c.yaml'))).toBe(false);
  });

  it('takes any name with --command and its arguments after --', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'workers:\n  - name: eng-worker-manager\n');
    const r = eng(['worker', 'add', 'billing', '--command', 'node', '-c', file, '--', './billing.js', '--verbose']);
    expect(r.code).toBe(0);
    const entry = parseYaml(readFileSync(file, 'utf8')).workers[1];
    expect(entry).toEqual({ name: 'billing', command: 'node', args: ['./billing.js', '--verbose'] });
    // arguments without a command, or a module name with a command, are mistakes worth naming
    const stray = eng(['worker', 'add', 'console', '-c', file, '--', 'x.js']);
    expect(stray.code).toBe(1);
    expect(stray.stderr).toContain('only taken with --command');
    const clash = eng(['worker', 'add', 'eng-http', '--command', 'node', '-c', file]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('is a built-in module');
  });

  it('in a fresh home writes the default modules with the new entry, so the next start still serves HTTP and state', async () => {
    const home = mkdtempSync(join(tmpdir(), 'eng-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'eng-cwd-'));
    const env = { ...process.env, ENG_HOME: home, ENG_CONFIG: '', ENG_DATA_DIR: join(cwd, 'data') };
    const added = spawnSync(process.execPath, engArgs(['worker', 'add', 'mcp']), { cwd, env, encoding: 'utf8' });
    expect(added.status).toBe(0);
    const file = join(home, 'config.yaml');
    expect(added.stdout).toContain(`created ${file} with the default modules`);
    const config = parseYaml(readFileSync(file, 'utf8')) as { workers: Array<{ name: string; config?: Record<string, unknown> }> };
    expect(config.workers.map((w) => w.name)).toEqual([...BUILTIN_MODULES.filter((m) => m.defaultOn).map((m) => m.name), 'mcp']);
    // the test moves the fixed default ports aside (other tests run beside it); the modules stay as written
    const bus = await freePort();
    const http = await freePort();
    const streams = await freePort();
    const ports: Record<string, number> = { 'eng-worker-manager': bus, 'eng-http': http, 'eng-stream': streams };
    for (const w of config.workers) if (ports[w.name]) w.config = { ...w.config, port: ports[w.name] };
    writeFileSync(file, stringifyYaml(config));

    const child = spawn(process.execPath, engArgs(['start']), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /^eng: ready /m.test(out), 30_000);
      const client = await RawClient.worker(`ws://127.0.0.1:${bus}`);
      await client.result('state::set', { scope: 'fresh', key: 'k', value: 7 });
      expect(await client.result('state::get', { scope: 'fresh', key: 'k' })).toBe(7);
      client.send({ type: 'registerfunction', id: 'fresh::hello' });
      client.send({
        type: 'registertrigger',
        id: 'fresh-route',
        trigger_type: 'http',
        function_id: 'fresh::hello',
        config: { api_path: 'hello', http_method: 'GET' },
      });
      client.socket.on('message', (raw) => {
        const frame = JSON.parse(raw.toString());
        if (frame.type === 'invokefunction' && frame.function_id === 'fresh::hello')
          client.send({ type: 'invocationresult', invocation_id: frame.invocation_id, result: { status_code: 200, body: { hi: true } } });
      });
      const res = await waitFor(async () => {
        const r = await fetch(`http://127.0.0.1:${http}/hello`);
        return r.status === 200 ? r : null;
      }, 10_000);
      expect(await res.json()).toEqual({ hi: true });
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000);
});

describe('eng trigger', () => {
  let engine: EngineProcess;
  beforeAll(async () => {
    engine = await startEngine();
  });
  afterAll(async () => {
    await engine.stop();
  });

  it('prints the result as JSON and exits 0', () => {
    const r = eng(['trigger', 'engine::functions::list', 'include_internal=true', '--url', engine.busUrl]);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.functions.some((f: { function_id: string }) => f.function_id === 'engine::functions::list')).toBe(true);
  });

  it('merges --json with key=value pairs', () => {
    const r = eng([
      'trigger',
      'engine::functions::info',
      '--json',
      '{"function_id":"nope"}',
      'function_id=engine::functions::list',
      '--url',
      engine.busUrl,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).function_id).toBe('engine::functions::list');
  });

  it('exits 1 with the error code when the function fails', () => {
    const r = eng(['trigger', 'nope::missing', '--url', engine.busUrl]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('function_not_found');
    expect(JSON.parse(r.stdout).error.code).toBe('function_not_found');
  });

  it('exits 1 with TIMEOUT when --timeout-ms expires on a function that never answers', async () => {
    const silent = await RawClient.worker(engine.busUrl);
    try {
      silent.send({ type: 'registerfunction', id: 'cli::never_answers' });
      await silent.result('engine::functions::list'); // same socket: the registration is in
      const r = await engAsync(['trigger', 'cli::never_answers', 'n=1', '--timeout-ms', '800', '--url', engine.busUrl]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('error TIMEOUT');
      expect(r.stderr).toContain('invocation timed out after 800ms');
      expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'TIMEOUT', message: 'invocation timed out after 800ms' } });
      expect(r.ms).toBeGreaterThanOrEqual(800);
      expect(r.ms).toBeLessThan(20_000); // the timeout, not the 30 s default, ended it
      // the call did reach the worker, which simply never answered
      const call = await silent.next((f) => f.type === 'invokefunction' && f.function_id === 'cli::never_answers');
      expect(call.data).toMatchObject({ n: 1 });
    } finally {
      await silent.terminate();
    }
  });

  it('rejects bad arguments with exit 2', () => {
    expect(eng(['trigger', 'x::y', '--json', '{oops', '--url', engine.busUrl]).code).toBe(2);
    expect(eng(['trigger', 'x::y', 'novalue', '--url', engine.busUrl]).code).toBe(2);
    expect(eng(['trigger', 'x::y', '--timeout-ms', '-5', '--url', engine.busUrl]).code).toBe(2);
  });

  it('exits 3 when the engine cannot be reached, without printing URL credentials', async () => {
    const port = await freePort();
    const r = eng(['trigger', 'x::y', '--url', `ws://user:s3cret@127.0.0.1:${port}`, '--timeout-ms', '1500']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot reach the engine/);
    expect(r.stderr + r.stdout).not.toContain('s3cret');
  });
});
