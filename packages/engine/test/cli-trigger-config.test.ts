import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, engArgs, freePort, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

// Issue 25 item 9: `eng trigger` dials the bus of the configuration `eng start` reads (-c,
// $ENG_CONFIG, ./config.yaml, ~/.eng), not always 49134; --url and ENG_URL still choose another.

/** `eng trigger` from `cwd`, with only the environment given (no ENG_URL / ENG_CONFIG inherited). */
function trigger(args: string[], cwd: string, env: Record<string, string> = {}) {
  const { ENG_URL: _url, ENG_CONFIG: _config, ENG_BUS_PORT: _port, ...inherited } = process.env;
  const result = spawnSync(process.execPath, engArgs(['trigger', ...args, '--timeout-ms', '3000']), {
    cwd,
    env: { ...inherited, ENG_HOME: join(tmpdir(), 'eng-cli-home-unused'), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('eng trigger finds the engine from the configuration', () => {
  let engine: EngineProcess;
  let marker: RawClient;
  /** A function only this engine has: calling its info proves which engine answered. */
  const markerId = `cli::marker_${randomUUID().slice(0, 8)}`;
  let configDir: string;
  let elsewhere: string;

  beforeAll(async () => {
    // the bus port as config.yaml writes it for `npm start`, the default a free port
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the engine's ${VAR:default}, not a template
    const port = 'port: ${ENG_BUS_PORT:{{BUS_PORT}}}';
    engine = await startEngine({ configYaml: `workers:\n  - name: eng-worker-manager\n    config:\n      ${port}\n` });
    expect(engine.busPort).not.toBe(49134);
    configDir = dirname(engine.configPath);
    elsewhere = mkdtempSync(join(tmpdir(), 'eng-cli-elsewhere-'));
    marker = await RawClient.worker(engine.busUrl);
    marker.send({ type: 'registerfunction', id: markerId });
    await marker.result('engine::functions::list'); // same socket: the registration is in
  });
  afterAll(async () => {
    await marker?.terminate();
    await engine?.stop();
  });

  const info = ['engine::functions::info', `function_id=${markerId}`];
  const answeredByThisEngine = (r: { code: number | null; stdout: string; stderr: string }) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).function_id).toBe(markerId);
  };

  it('reads ./config.yaml of the working directory, ENG_BUS_PORT substituted as eng start does', () => {
    answeredByThisEngine(trigger(info, configDir));
  });

  it('reads the file named by -c and by $ENG_CONFIG', () => {
    answeredByThisEngine(trigger([...info, '-c', engine.configPath], elsewhere));
    answeredByThisEngine(trigger(info, elsewhere, { ENG_CONFIG: engine.configPath }));
  });

  it('follows ENG_BUS_PORT like the engine would, and names the engine and where its address came from when it is unreachable', async () => {
    const dead = await freePort();
    const r = trigger(info, configDir, { ENG_BUS_PORT: String(dead) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`cannot reach the engine at ws://127.0.0.1:${dead}`);
    expect(r.stderr).toContain(`from ${engine.configPath}`);
  });

  it('ENG_URL beats the configuration file lookup; -c beats ENG_URL; --url beats both', async () => {
    const dead = `ws://127.0.0.1:${await freePort()}`;
    const viaEnv = trigger(info, configDir, { ENG_URL: dead });
    expect(viaEnv.code).toBe(3);
    expect(viaEnv.stderr).toContain(`cannot reach the engine at ${dead} (from $ENG_URL)`);
    answeredByThisEngine(trigger([...info, '-c', engine.configPath], elsewhere, { ENG_URL: dead }));
    answeredByThisEngine(trigger([...info, '--url', engine.busUrl], elsewhere, { ENG_URL: dead }));
    const viaFlag = trigger([...info, '--url', dead], configDir);
    expect(viaFlag.code).toBe(3);
    expect(viaFlag.stderr).toContain('(from --url)');
  });

  it('names the engine it talked to when the call fails', () => {
    const r = trigger(['nope::missing'], configDir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('function_not_found');
    expect(r.stderr).toContain(`engine ${engine.busUrl} (from ${engine.configPath})`);
  });

  it('without any configuration file dials the default bus and says so', () => {
    const r = trigger(info, elsewhere, { ENG_URL: '' });
    // whatever answers on 49134 (nothing, or another engine) is not this one
    if (r.code === 3)
      expect(r.stderr).toContain('cannot reach the engine at ws://127.0.0.1:49134 (from the default: no configuration file at');
    else expect(r.stderr).toContain('ws://127.0.0.1:49134');
  });
});
