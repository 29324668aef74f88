import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../src/config/load.ts';
import { Engine } from '../src/engine.ts';

const file = '/etc/eng/config.yaml';

function engineFor(text: string, env: NodeJS.ProcessEnv = {}): Engine {
  return new Engine({ config: parseConfigText(text, file, env), dataDir: '/tmp/eng-config-test' });
}

describe('config.yaml', () => {
  it('reads the workers list and its legacy alias modules', () => {
    const config = parseConfigText(
      'workers:\n  - name: eng-worker-manager\nmodules:\n  - name: console\n    config: {http_port: 3113}\n',
      file,
    );
    expect(config.workers.map((w) => w.name)).toEqual(['eng-worker-manager', 'console']);
    expect(config.workers[1]?.config).toEqual({ http_port: 3113 });
  });

  it('substitutes ${VAR} and ${VAR:default} before parsing', () => {
    const text = 'workers:\n  - name: eng-worker-manager\n    config:\n      port: ${BUS_PORT}\n      host: ${BUS_HOST:127.0.0.1}\n';
    const config = parseConfigText(text, file, { BUS_PORT: '4000' });
    expect(config.workers[0]?.config).toEqual({ port: 4000, host: '127.0.0.1' });
  });

  it('names the unset variable and its line', () => {
    expect(() => parseConfigText('workers:\n  - name: x\n    config: {port: ${NOPE}}\n', file, {})).toThrow(
      /config\.yaml:3: environment variable NOPE is not set and has no default/,
    );
  });

  it('rejects unknown top-level keys, naming them', () => {
    expect(() => parseConfigText('port: 3111\nworkers: []\n', file)).toThrow(ConfigError);
    expect(() => parseConfigText('port: 3111\nworkers: []\n', file)).toThrow(/unknown key "port"/);
  });

  it('reports YAML syntax errors with the position', () => {
    expect(() => parseConfigText('workers:\n  - name: [unclosed\n', file)).toThrow(/config\.yaml:\d+:\d+: invalid YAML/);
  });

  it('names the entry and the key of an invalid module config', () => {
    expect(() => engineFor('workers:\n  - name: eng-worker-manager\n    config:\n      port: "high"\n')).toThrow(
      /workers\[0\] \(eng-worker-manager\): config\.port: Invalid input: expected number, received string/,
    );
    expect(() => engineFor('workers:\n  - name: eng-worker-manager\n    config:\n      prot: 1\n')).toThrow(
      /workers\[0\] \(eng-worker-manager\): config: unknown key "prot"/,
    );
    expect(() => engineFor('workers:\n  - name: eng-worker-manager\n  - {}\n')).toThrow(/workers\[1\]\.name/);
  });

  it('accepts the iii spelling of built-in names and keeps unknown names as external workers', () => {
    const engine = engineFor(
      'workers:\n  - name: iii-worker-manager\n    config: {port: 0}\n  - name: console\n    config: {http_port: 3113}\n',
    );
    expect(engine.moduleNames).toContain('eng-worker-manager');
    expect(engine.externalWorkers.map((w) => w.name)).toEqual(['console']);
  });

  it('starts mandatory modules even when the file does not list them', () => {
    const engine = engineFor('workers: []\n');
    expect(engine.moduleNames).toEqual(expect.arrayContaining(['eng-worker-manager', 'eng-engine-functions']));
  });

  it('refuses a built-in module listed twice, except the worker bus (an open one beside RBAC ones)', () => {
    expect(() => engineFor('workers:\n  - name: eng-http\n  - name: iii-http\n')).toThrow(/eng-http is listed twice/);
    const engine = engineFor('workers:\n  - name: eng-worker-manager\n  - name: iii-worker-manager#rbac\n    config: { port: 0 }\n');
    expect(engine.moduleNames.filter((n) => n === 'eng-worker-manager')).toHaveLength(2);
  });
});
