/** One file of the UI bundle as the generated module holds it (scripts/build-bundle.ts). */
export interface EmbeddedFile {
  /** URL path, e.g. `/index.html`, `/assets/index-DUyD0GrV.js`. */
  path: string;
  /** Content-Type header value. */
  type: string;
  /** Strong ETag, quoted. */
  etag: string;
  /** base64 of the bytes. */
  body: string;
  /** base64 of the gzip / brotli encodings, for compressible files worth compressing. */
  gzip?: string;
  br?: string;
}
