import { describe, expect, it } from 'vitest';
import { DEFAULTS, engineUrls, envFlag, resolveOptions } from '../src/options.ts';
import { redactText, redactUrl } from '../src/redact.ts';

// seed table 4.4: every flag, its default, and the environment variables that stand in for flags

describe('eng-console options', () => {
  it('defaults to the seed values', () => {
    expect(resolveOptions({}, {})).toEqual({
      port: 3113,
      host: '127.0.0.1',
      engineHost: '127.0.0.1',
      enginePort: 3111,
      wsPort: 3112,
      bridgePort: 49134,
      otel: true,
      otelServiceName: 'eng-console',
      enableFlow: false,
    });
    expect(DEFAULTS.port).toBe(3113);
  });

  it('takes every flag', () => {
    const o = resolveOptions(
      {
        port: '4000',
        host: '0.0.0.0',
        engineHost: '10.0.0.5',
        enginePort: '4111',
        wsPort: '4112',
        bridgePort: '5000',
        otel: false,
        otelServiceName: 'ops-console',
        enableFlow: true,
      },
      {},
    );
    expect(o).toEqual({
      port: 4000,
      host: '0.0.0.0',
      engineHost: '10.0.0.5',
      enginePort: 4111,
      wsPort: 4112,
      bridgePort: 5000,
      otel: false,
      otelServiceName: 'ops-console',
      enableFlow: true,
    });
    expect(engineUrls(o)).toEqual({
      http: 'http://10.0.0.5:4111',
      streams: 'ws://10.0.0.5:4112',
      bridge: 'ws://10.0.0.5:5000',
      otlp: 'http://10.0.0.5:4111/v1/traces',
    });
  });

  it('reads OTEL_DISABLED, OTEL_SERVICE_NAME and ENG_ENABLE_FLOW', () => {
    expect(resolveOptions({}, { OTEL_DISABLED: 'true' }).otel).toBe(false);
    expect(resolveOptions({}, { OTEL_DISABLED: '1' }).otel).toBe(false);
    expect(resolveOptions({}, { OTEL_DISABLED: '0' }).otel).toBe(true);
    expect(resolveOptions({}, { OTEL_SERVICE_NAME: 'from-env' }).otelServiceName).toBe('from-env');
    expect(resolveOptions({}, { ENG_ENABLE_FLOW: 'yes' }).enableFlow).toBe(true);
    expect(resolveOptions({}, { ENG_ENABLE_FLOW: 'no' }).enableFlow).toBe(false);
  });

  it('lets flags win over the environment', () => {
    expect(resolveOptions({ otelServiceName: 'flag' }, { OTEL_SERVICE_NAME: 'env' }).otelServiceName).toBe('flag');
    // either way of disabling disables
    expect(resolveOptions({ otel: false }, { OTEL_DISABLED: '0' }).otel).toBe(false);
  });

  it('refuses ports that are not ports, naming the flag', () => {
    expect(() => resolveOptions({ port: 'abc' }, {})).toThrow('--port must be a port number (0-65535), got "abc"');
    expect(() => resolveOptions({ enginePort: '70000' }, {})).toThrow('--engine-port');
    expect(() => resolveOptions({ wsPort: '-1' }, {})).toThrow('--ws-port');
    expect(() => resolveOptions({ bridgePort: '1.5' }, {})).toThrow('--bridge-port');
    expect(() => resolveOptions({ engineHost: '  ' }, {})).toThrow('--engine-host must not be empty');
  });

  it('brackets IPv6 engine hosts in URLs', () => {
    expect(engineUrls(resolveOptions({ engineHost: '::1' }, {})).bridge).toBe('ws://[::1]:49134');
  });

  it('reads boolean environment values', () => {
    for (const yes of ['1', 'true', 'TRUE', 'yes', 'on']) expect(envFlag(yes)).toBe(true);
    for (const no of [undefined, '', '0', 'false', 'off', 'nope']) expect(envFlag(no)).toBe(false);
  });
});

describe('URL credential redaction', () => {
  it('removes user and password', () => {
    expect(redactUrl('ws://user:secret@host:49134')).toBe('ws://host:49134');
    expect(redactUrl('ws://user:secret@host:49134/')).toBe('ws://host:49134/');
    expect(redactUrl('http://token@example.com/path?q=1')).toBe('http://example.com/path?q=1');
    expect(redactUrl('ws://127.0.0.1:49134')).toBe('ws://127.0.0.1:49134');
    expect(redactText('lost ws://a:b@h:1 and http://c@d/e')).toBe('lost ws://h:1 and http://d/e');
  });

  it('takes userinfo up to the last @ and stops at quotes, so neither a raw @ nor JSON neighbours leak or break', () => {
    expect(redactUrl('ws://admin:p@ss@host:1/x')).toBe('ws://host:1/x');
    expect(redactText('{"u":"ws://a:b@h:1","v":"x@y"}')).toBe('{"u":"ws://h:1","v":"x@y"}');
    expect(redactText('mail bob@example.com')).toBe('mail bob@example.com');
  });

  it('masks sensitive query values and leaves the others', () => {
    expect(redactUrl('ws://h:1/?token=abc&stream=orders&api_key=k1#f')).toBe('ws://h:1/?token=***&stream=orders&api_key=***#f');
    expect(redactText('dial http://h/p?access_token=x&Password=y&q=1 failed')).toBe(
      'dial http://h/p?access_token=***&Password=***&q=1 failed',
    );
    expect(redactUrl('http://h/?auth=Basic%20x&client_secret=s&sig=z')).toBe('http://h/?auth=***&client_secret=***&sig=***');
    expect(redactUrl('http://h/?q=token')).toBe('http://h/?q=token');
  });
});
