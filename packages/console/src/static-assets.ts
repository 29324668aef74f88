import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, relative, sep } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * The UI bundle (Vite output of @eng/web), read into memory once at start and served with the
 * cache policy of seed 8 / table 4.2: `index.html` `no-cache` (always revalidated, so a new
 * deploy shows at once), content-hashed `/assets/*` `public, max-age=31536000, immutable`.
 * Compressible files are pre-compressed (brotli and gzip) and served by `Accept-Encoding`.
 */

export const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const NO_CACHE = 'no-cache, must-revalidate';

interface Asset {
  body: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

/** The parts of a file both console servers send: bytes, precompressed variants, type and ETag. */
export interface SendableAsset {
  body: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  etag: string;
}

/**
 * Answer a GET/HEAD for one asset: 304 when the client holds this ETag, otherwise the brotli or
 * gzip variant the client accepts, else the plain bytes. `headers` already carries type and caching.
 */
export function sendAsset(req: IncomingMessage, res: ServerResponse, asset: SendableAsset, headers: Record<string, string>): void {
  const match = req.headers['if-none-match'];
  if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const accept = String(req.headers['accept-encoding'] ?? '');
  let body = asset.body;
  if (asset.br && /\bbr\b/.test(accept)) {
    body = asset.br;
    headers['content-encoding'] = 'br';
  } else if (asset.gzip && /\bgzip\b/.test(accept)) {
    body = asset.gzip;
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = String(body.length);
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

export interface StaticBundle {
  /** Absolute dir the bundle was read from. */
  dir: string;
  files: number;
  bytes: number;
  /** sha256 sources of inline scripts in index.html, for the CSP. */
  inlineScriptHashes: string[];
  /** Serve `pathname` if it is part of the bundle; false when it is not ours to answer. */
  serve(req: IncomingMessage, res: ServerResponse, pathname: string, extraHeaders?: Record<string, string>): boolean;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot >= 0 ? path.slice(dot).toLowerCase() : '';
}

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.svg', '.txt', '.map']);

export function loadBundle(dir: string): StaticBundle {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`no UI bundle at ${dir} (index.html missing)`);
  const assets = new Map<string, Asset>();
  let bytes = 0;
  for (const file of walk(dir)) {
    const rel = `/${relative(dir, file).split(sep).join('/')}`;
    const body = readFileSync(file);
    bytes += body.length;
    const ext = extensionOf(file);
    const asset: Asset = {
      body,
      type: TYPES[ext] ?? 'application/octet-stream',
      etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
      cacheControl: rel.startsWith('/assets/') ? IMMUTABLE : NO_CACHE,
    };
    if (COMPRESSIBLE.has(ext) && body.length > 512) {
      asset.br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
      asset.gzip = gzipSync(body, { level: 9 });
    }
    assets.set(rel, asset);
  }
  const index = assets.get('/index.html') as Asset;
  const html = index.body.toString('utf8');
  const inlineScriptHashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] ?? '')
        .digest('base64')}'`,
  );
  statSync(dir);

  return {
    dir,
    files: assets.size,
    bytes,
    inlineScriptHashes,
    serve(req, res, pathname, extraHeaders = {}) {
      const key = pathname === '/' ? '/index.html' : pathname;
      const asset = assets.get(key);
      if (!asset) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        res.end('Method Not Allowed\n');
        return true;
      }
      const headers: Record<string, string> = {
        ...extraHeaders,
        'content-type': asset.type,
        'cache-control': asset.cacheControl,
        etag: asset.etag,
        vary: 'Accept-Encoding',
      };
      sendAsset(req, res, asset, headers);
      return true;
    },
  };
}
