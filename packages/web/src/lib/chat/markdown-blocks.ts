/**
 * Streaming-safe Markdown: an answer is cut into top-level blocks at blank lines outside code
 * fences, so while it streams only the last (growing) block is parsed again; finished blocks keep
 * their rendering. An unclosed fence stays one block until it closes, and renders as code meanwhile.
 */
export function splitBlocks(markdown: string): string[] {
  return blockSpans(markdown).map((s) => s.text);
}

export interface BlockSpan {
  text: string;
  /** Offset of the block's first character in the whole text. */
  start: number;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/**
 * The blocks of `markdown[from…]`, with their offsets. `from` must be the start of a block (or 0):
 * every block starts outside a fence, so cutting from there gives what cutting the whole text gives.
 */
export function blockSpans(markdown: string, from = 0): BlockSpan[] {
  const spans: BlockSpan[] = [];
  let start = -1;
  let end = -1;
  let fence: string | undefined;
  const flush = () => {
    if (start >= 0) spans.push({ text: markdown.slice(start, end), start });
    start = -1;
  };
  let at = from;
  while (at <= markdown.length) {
    let nl = markdown.indexOf('\n', at);
    if (nl < 0) nl = markdown.length;
    const line = markdown.slice(at, nl);
    const marker = line.length >= 3 ? FENCE.exec(line)?.[1] : undefined;
    if (fence) {
      end = nl;
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
    } else if (marker) {
      fence = marker;
      if (start < 0) start = at;
      end = nl;
    } else if (line.trim() === '') {
      // a blank line ends a block (the items of a loose list become lists of their own; an ordered one keeps its start number)
      flush();
    } else {
      if (start < 0) start = at;
      end = nl;
    }
    at = nl + 1;
  }
  flush();
  return spans;
}

/**
 * Blocks of a text that grows at its end (a streaming answer): when `text` extends the text of
 * `previous`, only its last block and what follows is cut again — the blocks before it are final.
 */
export function extendSpans(previous: { text: string; spans: readonly BlockSpan[] } | undefined, text: string): BlockSpan[] {
  const last = previous?.spans.at(-1);
  if (!previous || !last || text.length < previous.text.length || !text.startsWith(previous.text)) return blockSpans(text);
  return [...previous.spans.slice(0, -1), ...blockSpans(text, last.start)];
}

/** A block that is one fenced code block and nothing else (its closing fence may still be missing). */
export function fencedCode(block: string): { language: string | undefined; code: string; closed: boolean } | undefined {
  const open = /^(`{3,}|~{3,})([^\n`]*)(?:\n|$)/.exec(block);
  if (!open) return undefined;
  const fence = open[1] as string;
  const info = (open[2] ?? '').trim();
  const body = block.slice(open[0].length);
  const lines = body.split('\n');
  const close = lines.findIndex((l) => {
    const t = l.trim();
    return t.length >= fence.length && t[0] === fence[0] && /^(`+|~+)$/.test(t) && l.length - l.trimStart().length <= 3;
  });
  // text after the closing fence (no blank line between): not only a code block
  if (close >= 0 && close < lines.length - 1) return undefined;
  const code = (close >= 0 ? lines.slice(0, close) : lines).join('\n');
  const language = info.split(/\s+/)[0]?.toLowerCase() || undefined;
  return { language, code, closed: close >= 0 };
}
