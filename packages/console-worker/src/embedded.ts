import type { EmbeddedFile } from './embedded-types.ts';

/**
 * The UI bundle compiled into the server (issue 7 §2): the generated module carries every file of
 * packages/web/dist as base64, with content types, ETags and pre-compressed encodings worked out
 * at build time. Nothing here touches the filesystem, so the server works from any directory and
 * inside the single executable.
 */
export interface EmbeddedAsset {
  body: Buffer;
  gzip?: Buffer;
  br?: Buffer;
  type: string;
  etag: string;
}

export function decodeFiles(files: readonly EmbeddedFile[]): Map<string, EmbeddedAsset> {
  const assets = new Map<string, EmbeddedAsset>();
  for (const file of files) {
    assets.set(file.path, {
      body: Buffer.from(file.body, 'base64'),
      gzip: file.gzip ? Buffer.from(file.gzip, 'base64') : undefined,
      br: file.br ? Buffer.from(file.br, 'base64') : undefined,
      type: file.type,
      etag: file.etag,
    });
  }
  return assets;
}

/**
 * The generated module is imported when the server starts, not with this file: the tsx entry
 * writes it first when it is missing or stale, and a compiled console worker loads it from
 * src/generated/ as it is (it is not copied into the compiled file: see packages/engine/scripts/compile.mjs).
 */
export async function embeddedAssets(): Promise<Map<string, EmbeddedAsset>> {
  const { FILES } = await import('./generated/bundle.gen.mjs');
  return decodeFiles(FILES);
}
