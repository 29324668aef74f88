/**
 * Issue 26 item 4: iii's console's own registrations (`engine::console::*` functions and HTTP
 * routes under `_console/`) are system entries in eng's console, hidden like the engine's own
 * unless "show system" is on.
 */
import { describe, expect, it } from 'vitest';
import { isSystemFunction } from '../src/api/functions.ts';
import { isSystemTrigger } from '../src/api/triggers.ts';

describe("iii's console's registrations in eng's console", () => {
  it('engine::console::* functions are system functions, whoever registered them', () => {
    expect(isSystemFunction({ function_id: 'engine::console::functions', kind: 'user', metadata: {} } as never)).toBe(true);
    expect(isSystemFunction({ function_id: 'orders::list', kind: 'user', metadata: {} } as never)).toBe(false);
  });

  it('HTTP routes under _console/ are system triggers, with or without a leading slash', () => {
    const http = (function_id: string, api_path: string) => ({ function_id, trigger_type: 'http', config: { api_path } });
    expect(isSystemTrigger(http('engine::console::status', '_console/status'))).toBe(true);
    expect(isSystemTrigger(http('consolelike::bar', '_console/y'))).toBe(true);
    expect(isSystemTrigger(http('consolelike::bar', '/_console/y'))).toBe(true);
    expect(isSystemTrigger(http('orders::list', 'orders'))).toBe(false);
    expect(isSystemTrigger(http('orders::list', 'my_console/y'))).toBe(false);
    expect(isSystemTrigger({ function_id: 'orders::list', trigger_type: 'cron', config: { api_path: '_console/x' } })).toBe(false);
  });
});
