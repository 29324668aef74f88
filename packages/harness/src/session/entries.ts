import { sessionError } from './errors.ts';
import type { ContentBlock, Role, SessionEntry, StoredEntry } from './types.ts';

/** Entries from the root to `leafId` following `parent_id` (the transcript order), oldest first. */
export function pathTo(entries: Map<string, StoredEntry>, leafId: string | null): StoredEntry[] {
  const path: StoredEntry[] = [];
  const seen = new Set<string>();
  for (let id = leafId; id !== null; ) {
    const entry = entries.get(id);
    if (!entry || seen.has(id)) break; // a dangling or cyclic parent ends the path instead of looping
    seen.add(id);
    path.push(entry);
    id = entry.parent_id;
  }
  return path.reverse();
}

export function roleOf(entry: SessionEntry): Role | null {
  return entry.kind === 'message' ? entry.message.role : null;
}

/** Visit every block of a content array, descending into function_result content. */
export function forEachBlock(content: ContentBlock[] | undefined, visit: (block: ContentBlock) => void): void {
  for (const block of content ?? []) {
    visit(block);
    if (block.type === 'function_result') forEachBlock(block.content, visit);
  }
}

/** Attachment ids an entry refers to: `file` blocks and images linked to their stored original. */
export function attachmentRefs(entry: SessionEntry): string[] {
  if (entry.kind !== 'message') return [];
  const ids: string[] = [];
  forEachBlock(entry.message.content, (block) => {
    if (block.type === 'file') ids.push(block.attachment_id);
    else if (block.type === 'image' && typeof block.attachment_id === 'string' && block.attachment_id) ids.push(block.attachment_id);
  });
  return ids;
}

/** Content with the data of linked images blanked (`include_image_data: false`); unlinked images stay inline. */
function stripImageData(content: ContentBlock[]): ContentBlock[] {
  return content.map((block) => {
    if (block.type === 'image' && block.attachment_id) return { ...block, data: '' };
    if (block.type === 'function_result') return { ...block, content: stripImageData(block.content) };
    return block;
  });
}

/** The wire form of an entry (without the store's sequence number). */
export function publicEntry(entry: StoredEntry, includeImageData = true): SessionEntry {
  const { seq: _seq, ...rest } = entry;
  if (includeImageData || rest.kind !== 'message') return rest;
  return { ...rest, message: { ...rest.message, content: stripImageData(rest.message.content) } };
}

/** A `session::messages` item: the entry's id, place, revision and its message or custom payload. */
export function messageItem(entry: StoredEntry, includeImageData: boolean) {
  const e = publicEntry(entry, includeImageData);
  return {
    entry_id: e.id,
    parent_id: e.parent_id,
    timestamp: e.timestamp,
    revision: e.revision,
    ...(e.origin ? { origin: e.origin } : {}),
    ...(e.kind === 'message' ? { message: e.message } : { custom: { custom_type: e.custom_type, data: e.data } }),
  };
}

export function requireEntry(entries: Map<string, StoredEntry>, sessionId: string, entryId: string): StoredEntry {
  const entry = entries.get(entryId);
  if (!entry) throw sessionError('entry_not_found', `entry ${entryId} does not exist in session ${sessionId}`);
  return entry;
}
