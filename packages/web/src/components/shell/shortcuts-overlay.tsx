import { useFlowEnabled } from '../../api/console-config.ts';
import { usePresence } from '../../api/presence.ts';
import { allShortcuts } from '../../lib/keyboard.ts';
import { NUMBER_JUMPS, PAGES } from '../../pages.ts';
import { Dialog } from '../ui/dialog.tsx';
import { Kbd } from '../ui/kbd.tsx';

/** `?`: every keyboard shortcut, grouped: the `g <key>` of each page shown and ⌘/Ctrl + 1…9 included. */
export function ShortcutsOverlay({ open, onClose }: { open: boolean; onClose: () => void }) {
  const flowEnabled = useFlowEnabled();
  const presence = usePresence();
  const pages = PAGES.filter((p) => (!p.flowOnly || flowEnabled) && (!p.presence || presence[p.presence]));
  const shortcuts = allShortcuts(pages, NUMBER_JUMPS).filter((s) => s.group !== 'Chat' || presence.chat);
  const groups = [...new Set(shortcuts.map((s) => s.group))];
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts" labelledBy="shortcuts-title" className="max-w-3xl">
      <div className="max-h-[75vh] gap-4 overflow-y-auto p-4 md:columns-2">
        {groups.map((group) => (
          <section key={group} aria-label={group} className="mb-4 break-inside-avoid">
            <h3 className="mb-1.5 text-[10.5px] font-semibold tracking-wider text-faint uppercase">{group}</h3>
            <ul className="divide-y divide-line rounded-lg border border-line">
              {shortcuts
                .filter((s) => s.group === group)
                .map((s) => (
                  <li key={s.keys} className="flex items-center justify-between gap-3 px-3 py-1.5 text-[13px]" data-testid="shortcut">
                    <span className="text-fg">{s.description}</span>
                    <Kbd keys={s.keys} />
                  </li>
                ))}
            </ul>
          </section>
        ))}
        <p className="text-xs text-muted">Shortcuts are ignored while you type in a field, except ⌘K / Ctrl K.</p>
      </div>
    </Dialog>
  );
}
