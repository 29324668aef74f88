// Fuzzy ranking shared by the command palette and the @-mention search (api/functions-catalog.ts).

/**
 * How well `query` matches: a substring of the label ranks highest (earlier is better), then a
 * substring of the extra text (description, config), then the label's letters in order
 * (`hsum` finds `hourly_summary`). -1: no match.
 */
export function matchScore(query: string, label: string, extra = ''): number {
  const q = query.trim().toLowerCase();
  if (!q) return 0;
  const t = label.toLowerCase();
  const at = t.indexOf(q);
  if (at >= 0) return 2000 - at - t.length * 0.01;
  if (extra.toLowerCase().includes(q)) return 1000;
  let ti = 0;
  let score = 0;
  for (const ch of q) {
    const found = t.indexOf(ch, ti);
    if (found < 0) return -1;
    score += found === ti ? 3 : 1;
    ti = found + 1;
  }
  return score;
}
