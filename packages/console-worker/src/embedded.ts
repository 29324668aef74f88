import type { EmbeddedFile } from './embedded-types.ts';
import { FILES } from './generated/bundle.gen.ts';

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

export function embeddedAssets(): Map<string, EmbeddedAsset> {
  return decodeFiles(FILES);
}
