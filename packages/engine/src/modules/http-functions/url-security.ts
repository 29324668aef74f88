import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { EngError } from '@eng/protocol';

// spec: engine-protocol §3.4 — `security.url_allowlist`, `block_private_ips`, `require_https`.

export const UrlErrorCode = 'url_validation_failed';

export interface UrlRules {
  /** Host globs (`api.example.com`, `*.example.com`, `*`); case-insensitive, `*` spans dots. */
  url_allowlist: string[];
  block_private_ips: boolean;
  require_https: boolean;
  /** Addresses or CIDR ranges (`10.1.2.3`, `10.1.0.0/16`, `fd00::/8`) that block_private_ips lets through. */
  private_ip_exceptions?: string[];
}

/**
 * Addresses a webhook may not reach when `block_private_ips` is on: loopback, RFC 1918, link-local,
 * carrier-grade NAT, unspecified, broadcast, documentation/benchmark ranges, multicast, reserved,
 * and their IPv6 counterparts (unique-local, link-local, multicast, NAT64 and IPv4-mapped forms are
 * checked through the IPv4 address they carry).
 */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (`::ffff:10.0.0.1`, `::ffff:a00:1`, NAT64 `64:ff9b::a00:1`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1] as string, 16);
    const low = Number.parseInt(hex[2] as string, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return PRIVATE.check(v4, 'ipv4');
    return PRIVATE.check(address, 'ipv6');
  }
  return false;
}

function hostGlob(pattern: string): RegExp {
  const escaped = pattern
    .trim()
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${escaped}$`);
}

/** A URL's host as written in the allowlist: lower case, IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Checks one URL against the rules. `check` covers everything decidable from the URL text; the
 * private-address rule is enforced again on the addresses the connection actually uses
 * (`guardedLookup`), so a name that resolves to a public address at registration and a private one
 * later (DNS rebinding) is still refused.
 */
export class UrlGuard {
  private readonly allow: RegExp[];
  private readonly exceptions = new BlockList();

  constructor(readonly rules: UrlRules) {
    this.allow = rules.url_allowlist.map(hostGlob);
    for (const entry of rules.private_ip_exceptions ?? []) addException(this.exceptions, entry);
  }

  /** Private under block_private_ips and not one of the configured exceptions. */
  blocked(address: string): boolean {
    if (!isPrivateAddress(address)) return false;
    const family = isIP(address);
    const v4 = family === 6 ? embeddedIpv4(address) : undefined;
    if (v4) return !this.exceptions.check(v4, 'ipv4');
    return !this.exceptions.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  /** Parse and check scheme and allowlist (and a literal IP); throws `url_validation_failed` naming the rule. */
  check(raw: string, what = 'invocation.url'): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new EngError(UrlErrorCode, `${what} "${raw}" is not a valid absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EngError(UrlErrorCode, `${what} must be http or https, not ${url.protocol.slice(0, -1)}`);
    }
    const shown = redactUrl(url);
    if (this.rules.require_https && url.protocol !== 'https:') {
      throw new EngError(
        UrlErrorCode,
        `${what} ${shown} is refused by require_https (eng-http-functions security): use https, or set require_https: false`,
      );
    }
    const host = hostOf(url);
    if (!this.allow.some((re) => re.test(host))) {
      throw new EngError(
        UrlErrorCode,
        `${what} ${shown} is refused by url_allowlist (eng-http-functions security): host "${host}" matches none of ${JSON.stringify(this.rules.url_allowlist)}`,
      );
    }
    if (this.rules.block_private_ips && isIP(host) && this.blocked(host)) {
      throw privateRefusal(what, shown, host);
    }
    return url;
  }

  /** `check` plus, with block_private_ips, a DNS lookup: every address the name has must be public. */
  async checkResolved(raw: string, what = 'invocation.url'): Promise<URL> {
    const url = this.check(raw, what);
    const host = hostOf(url);
    if (!this.rules.block_private_ips || isIP(host)) return url;
    let addresses: LookupAddress[];
    try {
      addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
        dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
      );
    } catch (err) {
      throw new EngError(
        UrlErrorCode,
        `${what} ${redactUrl(url)}: host "${host}" could not be resolved to check block_private_ips (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    const blocked = addresses.find((a) => this.blocked(a.address));
    if (blocked) throw privateRefusal(what, redactUrl(url), `${host} (${blocked.address})`);
    return url;
  }

  /**
   * A `lookup` for node:http that refuses private addresses at connect time (the check that
   * counts: it sees the address the socket is about to use).
   */
  guardedLookup(shownUrl: string): typeof dnsLookup {
    const rules = this.rules;
    const blocked = (address: string) => this.blocked(address);
    const guarded = (hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { ...(options as object), all: true }, (err, addresses) => {
        if (err) return callback(err);
        const list = addresses as LookupAddress[];
        if (rules.block_private_ips) {
          const refused = list.find((a) => blocked(a.address));
          if (refused) return callback(privateRefusal('invocation.url', shownUrl, `${hostname} (${refused.address})`));
        }
        if ((options as { all?: boolean }).all) return callback(null, list);
        const first = list[0];
        if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
        return callback(null, first.address, first.family);
      });
    };
    return guarded as unknown as typeof dnsLookup;
  }
}

/** `10.1.2.3` or `10.1.0.0/16` (IPv4 or IPv6); throws a readable error for anything else. */
export function addException(list: BlockList, entry: string): void {
  const [address, bits] = entry.trim().split('/');
  const family = isIP(address ?? '');
  const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
  if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
    throw new Error(`private_ip_exceptions: "${entry}" is not an IP address or CIDR range (10.1.2.3, 10.1.0.0/16, fd00::/8)`);
  }
  list.addSubnet(address as string, prefix, family === 6 ? 'ipv6' : 'ipv4');
}

function privateRefusal(what: string, shown: string, host: string): EngError {
  return new EngError(
    UrlErrorCode,
    `${what} ${shown} is refused by block_private_ips (eng-http-functions security): ${host} is a private, loopback or reserved address`,
  );
}

/**
 * A URL for logs, spans and listings: userinfo replaced and every query value hidden
 * (`https://***@api.example.com/hook?token=***`), since either may carry a secret.
 */
export function redactUrl(input: URL | string): string {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : new URL(input.href);
  } catch {
    return '(invalid URL)';
  }
  const credentials = url.username !== '' || url.password !== '';
  url.username = '';
  url.password = '';
  let query = '';
  if (url.search) {
    const names = [...url.searchParams.keys()];
    query = `?${names.map((n) => `${encodeURIComponent(n)}=***`).join('&')}`;
  }
  url.search = '';
  url.hash = '';
  const base = url.href;
  const text = credentials ? base.replace('://', '://***@') : base;
  return `${text}${query}`;
}
