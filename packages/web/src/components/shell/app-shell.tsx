import { Outlet, useNavigate } from '@tanstack/react-router';
import { Menu } from 'lucide-react';
import { useRef, useState } from 'react';
import { queryClient } from '../../api/query-client.ts';
import { type QueueTopic, queueKeys } from '../../api/queues.ts';
import { isTyping, useKeydown } from '../../lib/keyboard.ts';
import { toggleTheme } from '../../lib/theme.ts';
import { NUMBER_JUMPS, PAGES } from '../../pages.ts';
import { IconButton } from '../ui/button.tsx';
import { CommandPalette } from './command-palette.tsx';
import { ConnectionPill } from './connection-pill.tsx';
import { EngineBanner } from './engine-banner.tsx';
import { ShortcutsOverlay } from './shortcuts-overlay.tsx';
import { Brand, Sidebar } from './sidebar.tsx';
import { ThemeToggle } from './theme-toggle.tsx';

/** The frame around every page: sidebar (a drawer on small screens), outage banner, palette, shortcuts. */
export function AppShell() {
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const navigate = useNavigate();
  const pendingG = useRef(0);

  useKeydown((e) => {
    if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      setPaletteOpen((v) => !v);
      return;
    }
    if ((e.metaKey || e.ctrlKey) && !e.altKey && !e.shiftKey && !isTyping(e.target) && !paletteOpen) {
      const jump = NUMBER_JUMPS.find((j) => j.digit === e.key);
      if (jump) {
        // ⌘/Ctrl + 1…9 (console spec §4): taken from the browser's tab switching while the console has focus
        e.preventDefault();
        if (jump.deadLetters) {
          // the first name that has dead letters, else the Queues page on its Dead letters tab
          const topics = queryClient.getQueryData<QueueTopic[]>(queueKeys.topics()) ?? [];
          const topic = topics.find((t) => t.dlq_count > 0)?.name ?? topics[0]?.name;
          void navigate({ to: '/queues', search: { topic, tab: 'dead-letters' } });
        } else void navigate({ to: jump.path });
        return;
      }
    }
    if (e.metaKey || e.ctrlKey || e.altKey || isTyping(e.target) || paletteOpen) return;
    if (Date.now() - pendingG.current < 1200) {
      pendingG.current = 0;
      const page = PAGES.find((p) => p.key === e.key.toLowerCase());
      if (page) {
        e.preventDefault();
        void navigate({ to: page.path });
      }
      return;
    }
    if (e.key === 'g') pendingG.current = Date.now();
    else if (e.key === '?') {
      e.preventDefault();
      setHelpOpen((v) => !v);
    } else if (e.key === '/') {
      const search = document.querySelector<HTMLInputElement>('main [data-search]');
      if (search) {
        e.preventDefault();
        search.focus();
        search.select();
      }
    } else if (e.key === 't') toggleTheme();
    else if (e.key === 'Escape') setDrawerOpen(false);
  });

  return (
    <div className="flex h-full">
      <Sidebar className="hidden md:flex" onOpenPalette={() => setPaletteOpen(true)} onOpenHelp={() => setHelpOpen(true)} />
      {drawerOpen ? (
        <div className="fixed inset-0 z-40 md:hidden">
          <div className="absolute inset-0 bg-[var(--c-overlay)]" onClick={() => setDrawerOpen(false)} aria-hidden="true" />
          <Sidebar
            className="relative flex h-full shadow-pop"
            onNavigate={() => setDrawerOpen(false)}
            onOpenPalette={() => {
              setDrawerOpen(false);
              setPaletteOpen(true);
            }}
            onOpenHelp={() => setHelpOpen(true)}
          />
        </div>
      ) : null}
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex h-12 items-center gap-2 border-b border-line bg-surface px-3 md:hidden">
          <IconButton icon={Menu} label="Open navigation" onClick={() => setDrawerOpen(true)} />
          <Brand compact />
          <div className="ml-auto flex items-center gap-1">
            <ConnectionPill compact />
            <ThemeToggle />
          </div>
        </header>
        <EngineBanner />
        <main className="min-h-0 flex-1 overflow-auto">
          <Outlet />
        </main>
      </div>
      <CommandPalette open={paletteOpen} onClose={() => setPaletteOpen(false)} onShowShortcuts={() => setHelpOpen(true)} />
      <ShortcutsOverlay open={helpOpen} onClose={() => setHelpOpen(false)} />
    </div>
  );
}
