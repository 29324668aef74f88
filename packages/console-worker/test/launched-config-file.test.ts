import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveSettings } from '../src/config.ts';

// Issue 25 item 10: launched by an engine started with `-c other.yaml`, the worker runs in that
// file's folder, whose config.yaml is some other file: its settings come from the engine (its entry
// in ENG_WORKER_CONFIG, the engine's addresses), never from that config.yaml.

const cwd = process.cwd();
afterEach(() => process.chdir(cwd));

function folderWithOtherConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'eng-cw-launched-'));
  writeFileSync(join(dir, 'config.yaml'), 'workers:\n  - name: console\n    config:\n      http_port: 4999\n      enable_flow: true\n');
  process.chdir(dir);
  return dir;
}

describe('the config file a console worker reads', () => {
  it('is not ./config.yaml when an engine launched it', () => {
    folderWithOtherConfig();
    const settings = resolveSettings(
      {},
      { ENG_ENGINE_PID: '1234', ENG_WORKER_CONFIG: '{"http_port": 5111}', ENG_URL: 'ws://127.0.0.1:49999' },
    );
    expect(settings).toMatchObject({ httpPort: 5111, enableFlow: false, configFound: false });
    expect(settings.sources.enable_flow).toBe('default');
  });

  it('is ./config.yaml when run by hand, and the --config file in any case', () => {
    const dir = folderWithOtherConfig();
    expect(resolveSettings({}, {})).toMatchObject({ httpPort: 4999, enableFlow: true, configFound: true });
    expect(resolveSettings({ config: join(dir, 'config.yaml') }, { ENG_ENGINE_PID: '1234' })).toMatchObject({
      httpPort: 4999,
      configFound: true,
    });
  });
});
