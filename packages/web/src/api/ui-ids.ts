/**
 * Function ids this UI registers for live updates (api/live.ts). They carry
 * `metadata.internal: true` so listings hide them; their trigger bindings are filtered here too,
 * because the engine lists bindings of every non-`engine::` function.
 */
export const UI_FUNCTION_PREFIX = 'eng.ui::';

export function isUiFunction(functionId: string): boolean {
  return functionId.startsWith(UI_FUNCTION_PREFIX);
}
