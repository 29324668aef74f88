/**
 * Issue 12 item 11: URL credentials never leave eng-console — not in `/_console/config` (what the
 * Config page renders, OTLP endpoint included), probes, error bodies, WebSocket close reasons or
 * any output line, whether the engine is down or up. The streams proxy passes the browser's query
 * on, so a `?token=` in it must not reach a log line or a close reason either.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { CONSOLE_BIN, deadPort, makeBundle, spawnConsole } from './helpers.ts';

const bundle = makeBundle();
const running: ChildProcess[] = [];
// `pw` exactly as an operator would type it; matched as a word so "pwd" or a hash cannot hide a leak
const LEAK = /(?<![A-Za-z0-9])pw(?![A-Za-z0-9])|admin|s3cr3t-tok/;

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

const exited = (child: ChildProcess) => new Promise<void>((r) => child.once('exit', () => r()));

async function closeReason(url: string): Promise<string> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  return new Promise<string>((r) => ws.once('close', (_code, why) => r(why.toString())));
}

/** Every console surface that may name an engine URL, as text. */
async function everythingShown(base: string): Promise<string[]> {
  const texts: string[] = [];
  const config = await fetch(`${base}/_console/config`);
  expect(config.status).toBe(200);
  texts.push(await config.text());
  texts.push(await (await fetch(`${base}/_console/probe`)).text());
  texts.push(
    await (
      await fetch(`${base}/_console/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"function_id":"nothing::here","input":{}}',
      })
    ).text(),
  );
  texts.push(await (await fetch(`${base}/_console/http/anything?x=1`)).text());
  return texts;
}

describe('eng-console redacts URL credentials', () => {
  it('with the engine down: config (OTLP endpoint too), probes, errors, close reasons and logs name the host only', async () => {
    const [enginePort, wsPort, bridgePort] = [await deadPort(), await deadPort(), await deadPort()];
    const c = await spawnConsole({
      argv: [
        CONSOLE_BIN,
        '-p',
        '0',
        '--engine-host',
        'admin:pw@127.0.0.1',
        '--engine-port',
        String(enginePort),
        '--ws-port',
        String(wsPort),
        '--bridge-port',
        String(bridgePort),
      ],
      webDir: bundle,
      running,
      env: { ENG_LOG_LEVEL: 'debug' },
      cwd: REPO_ROOT,
    });
    const config = await (await fetch(`${c.url}/_console/config`)).json();
    // still useful: the host, ports and URLs are all there, only the credentials are gone
    expect(config.engine_host).toBe('127.0.0.1');
    expect(config.engine_urls.bridge).toBe(`ws://127.0.0.1:${bridgePort}`);
    expect(config.otel.enabled).toBe(true);
    expect(config.otel.endpoint).toBe(`http://127.0.0.1:${enginePort}/v1/traces`);

    const texts = await everythingShown(c.url);
    const wsBase = c.url.replace('http', 'ws');
    texts.push(await closeReason(`${wsBase}/ws`));
    const streamsReason = await closeReason(`${wsBase}/ws/streams?token=s3cr3t-tok&stream=orders`);
    expect(streamsReason).toContain(`127.0.0.1:${wsPort}`);
    texts.push(streamsReason);
    for (const text of texts) expect(text).not.toMatch(LEAK);

    c.child.kill('SIGTERM');
    await exited(c.child);
    expect(c.output()).toContain(`127.0.0.1:${bridgePort}`);
    expect(c.output()).not.toMatch(LEAK);
  });

  it('with the engine up: connected, and nothing shown carries the credentials', async () => {
    const engine = await startEngine({ workersYaml: '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n' });
    try {
      const c = await spawnConsole({
        argv: [
          CONSOLE_BIN,
          '-p',
          '0',
          '--engine-host',
          'admin:pw@127.0.0.1',
          '--engine-port',
          String(engine.ports.HTTP),
          '--bridge-port',
          String(engine.busPort),
        ],
        webDir: bundle,
        running,
        env: { ENG_LOG_LEVEL: 'debug' },
        cwd: REPO_ROOT,
      });
      await waitFor(async () => (await (await fetch(`${c.url}/_console/config`)).json()).engine_connected === true, 15_000);
      for (const text of await everythingShown(c.url)) expect(text).not.toMatch(LEAK);
      c.child.kill('SIGTERM');
      await exited(c.child);
      expect(c.output()).toContain('connected to the engine at ws://127.0.0.1:');
      expect(c.output()).not.toMatch(LEAK);
    } finally {
      await engine.stop();
    }
  });
});
