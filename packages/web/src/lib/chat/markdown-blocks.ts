/**
 * Streaming-safe Markdown: an answer is cut into top-level blocks at blank lines outside code
 * fences, so while it streams only the last (growing) block is parsed again; finished blocks keep
 * their rendering. An unclosed fence stays one block until it closes, and renders as code meanwhile.
 */
export function splitBlocks(markdown: string): string[] {
  const lines = markdown.split('\n');
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    if (current.some((l) => l.trim() !== '')) blocks.push(current.join('\n'));
    current = [];
  };
  for (const line of lines) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      current.push(line);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      current.push(line);
      continue;
    }
    // a blank line ends a block (the items of a loose list become lists of their own; an ordered one keeps its start number)
    if (line.trim() === '') {
      flush();
      continue;
    }
    current.push(line);
  }
  flush();
  return blocks;
}
