import type { Block } from './transcript.ts';

/**
 * Attachments (console-worker.md §2.9): a raster image becomes a native `image` block (refused
 * with an explanation when the model does not read images), markup, SVG and text files are
 * inlined as `<attached-file>` text, anything else unreadable is named with its error.
 */

export const MAX_TEXT_BYTES = 1_000_000;
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

export interface Attachment {
  id: string;
  name: string;
  mime: string;
  size: number;
  kind: 'image' | 'text' | 'refused';
  /** base64 for images, the text for text files. */
  data?: string;
  /** Why it cannot be sent as it is. */
  error?: string;
}

const TEXT_EXT =
  /\.(txt|md|markdown|json|jsonl|ya?ml|toml|ini|cfg|conf|csv|tsv|log|xml|html?|css|scss|js|mjs|cjs|jsx|ts|tsx|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|sql|svg|env|gitignore|dockerfile)$/i;

export function classify(file: { name: string; type: string }): 'image' | 'text' | 'other' {
  const mime = file.type.toLowerCase();
  if (mime.startsWith('image/') && mime !== 'image/svg+xml') return 'image';
  if (mime.startsWith('text/') || mime === 'image/svg+xml' || /json|xml|yaml|javascript|typescript/.test(mime)) return 'text';
  if (TEXT_EXT.test(file.name) || /^(dockerfile|makefile|readme)$/i.test(file.name)) return 'text';
  return 'other';
}

function base64Of(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

let seq = 0;

export async function readAttachment(file: File): Promise<Attachment> {
  const base = { id: `att${++seq}-${Date.now()}`, name: file.name, mime: file.type || 'application/octet-stream', size: file.size };
  const kind = classify(file);
  if (kind === 'image') {
    if (file.size > MAX_IMAGE_BYTES) return { ...base, kind: 'refused', error: `larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB` };
    return { ...base, kind: 'image', data: base64Of(await file.arrayBuffer()) };
  }
  if (kind === 'text') {
    if (file.size > MAX_TEXT_BYTES) return { ...base, kind: 'refused', error: 'text files over 1 MB are not inlined' };
    return { ...base, kind: 'text', data: await file.text() };
  }
  return { ...base, kind: 'refused', error: 'not a text or image file' };
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The blocks a message carries for its attachments; images for a model without vision are explained instead. */
export function attachmentBlocks(
  attachments: readonly Attachment[],
  options: { vision: boolean; modelLabel: string; imageIds?: ReadonlyMap<string, string> },
): Block[] {
  const out: Block[] = [];
  for (const a of attachments) {
    if (a.kind === 'image' && options.vision && a.data) {
      const attachmentId = options.imageIds?.get(a.id);
      out.push({ type: 'image', mime: a.mime, data: a.data, ...(attachmentId ? { attachment_id: attachmentId } : {}) });
    } else if (a.kind === 'image') {
      out.push({
        type: 'text',
        text: `<attached-file name="${escapeAttr(a.name)}" mime="${escapeAttr(a.mime)}" error="not sent: ${escapeAttr(options.modelLabel)} does not read images" />`,
      });
    } else if (a.kind === 'text') {
      out.push({
        type: 'text',
        text: `<attached-file name="${escapeAttr(a.name)}" mime="${escapeAttr(a.mime)}">\n${a.data ?? ''}\n</attached-file>`,
      });
    } else {
      out.push({ type: 'text', text: `<attached-file name="${escapeAttr(a.name)}" error="${escapeAttr(a.error ?? 'unreadable')}" />` });
    }
  }
  return out;
}

/** An `<attached-file …>` text block, parsed back for the transcript's chips. */
export function parseAttachedFile(text: string): { name: string; mime?: string; error?: string; body?: string } | undefined {
  const match = /^<attached-file name="([^"]*)"(?: mime="([^"]*)")?(?: error="([^"]*)")?\s*(\/>|>\n([\s\S]*)\n<\/attached-file>)$/.exec(
    text,
  );
  if (!match) return undefined;
  const unquote = (s: string | undefined) =>
    s
      ?.replace(/&lt;/g, '<')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  return {
    name: unquote(match[1]) ?? '',
    ...(match[2] ? { mime: unquote(match[2]) } : {}),
    ...(match[3] ? { error: unquote(match[3]) } : {}),
    ...(match[5] !== undefined ? { body: match[5] } : {}),
  };
}
