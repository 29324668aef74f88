/**
 * The view keeps this much beside the span panel: the waterfall's span-name column (280) and a
 * timeline still worth reading (~360) plus its duration gutter. Narrower, the panel goes below the
 * view instead of squeezing the timeline to a sliver (issue 25 item 15: ~150 px at 1440).
 */
const SIDE_VIEW_MIN_WIDTH = 700;
/** Below the panel, the view keeps at least this height (toolbar, ruler and a few rows). */
export const STACK_VIEW_MIN_HEIGHT = 220;

/**
 * Where the span detail goes: beside the view when both fit, below it when the width is short but
 * the height is not, over it on a phone (or a short window).
 */
export function spanPanelLayout(width: number, height: number, panelWidth: number): 'side' | 'stack' | 'overlay' {
  if (width <= 0) return 'side';
  if (width - panelWidth - 6 >= SIDE_VIEW_MIN_WIDTH) return 'side';
  if (width >= 560 && height >= STACK_VIEW_MIN_HEIGHT + 240) return 'stack';
  return 'overlay';
}
