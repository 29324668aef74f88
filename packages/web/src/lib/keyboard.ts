import { useEffect, useRef } from 'react';

/** True when focus is in something the user types into (shortcuts stand aside, console spec §4). */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  const tag = el.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

export interface Shortcut {
  /** `mod+k`, `?`, `g f`, `/`, `escape` */
  keys: string;
  description: string;
  group: string;
}

/** Every shortcut, for the `?` overlay. Handlers live where the behaviour lives. */
export const SHORTCUTS: Shortcut[] = [
  { keys: 'mod+k', description: 'Open the command palette', group: 'General' },
  { keys: '?', description: 'Show keyboard shortcuts', group: 'General' },
  { keys: '/', description: 'Focus the search box of the page', group: 'General' },
  { keys: 't', description: 'Toggle light / dark theme', group: 'General' },
  { keys: 'escape', description: 'Close dialogs and panels', group: 'General' },
  // the chat page's keys (components/chat/chat-page.tsx, composer.tsx); listed while the chat stack is connected
  { keys: 'Enter', description: 'Send the message (Shift+Enter: new line)', group: 'Chat' },
  { keys: 'mod+.', description: 'Stop the answer while it streams (also Esc)', group: 'Chat' },
  { keys: 'n', description: 'New conversation', group: 'Chat' },
  { keys: '@', description: 'Mention a function (↑ ↓, Enter to pick)', group: 'Chat' },
];

/** The overlay's full list: the general keys, `g <key>` for every page shown, ⌘/Ctrl + 1…9. */
export function allShortcuts(pages: Array<{ key: string; label: string }>, jumps: Array<{ digit: string; label: string }>): Shortcut[] {
  return [
    ...SHORTCUTS,
    ...pages.map((p) => ({ keys: `g ${p.key}`, description: `Go to ${p.label}`, group: 'Go to a page (g, then a letter)' })),
    ...jumps.map((j) => ({ keys: `mod+${j.digit}`, description: `Jump to ${j.label}`, group: 'Jump (⌘/Ctrl + number)' })),
  ];
}

/** Subscribe to keydown on the window for the component's lifetime; the latest handler always runs. */
export function useKeydown(handler: (event: KeyboardEvent) => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const listener = (event: KeyboardEvent) => latest.current(event);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);
}

export const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

export function keyLabel(key: string): string {
  return key
    .split('+')
    .map((k) => (k === 'mod' ? (isMac ? '⌘' : 'Ctrl') : k === 'escape' ? 'Esc' : k.length === 1 ? k.toUpperCase() : k))
    .join(isMac ? '' : '+');
}
