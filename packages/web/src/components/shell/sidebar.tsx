import { Link } from '@tanstack/react-router';
import { Keyboard, Search } from 'lucide-react';
import { useConsoleConfig, useFlowEnabled } from '../../api/console-config.ts';
import { usePresence } from '../../api/presence.ts';
import { isMac } from '../../lib/keyboard.ts';
import { PAGES, type PageEntry } from '../../pages.ts';
import { cn } from '../ui/cn.ts';
import { ConnectionPill } from './connection-pill.tsx';
import { LastUpdate } from './last-update.tsx';
import { ThemeToggle } from './theme-toggle.tsx';

export function Brand({ compact }: { compact?: boolean }) {
  return (
    <div className="flex items-center gap-2">
      <div className="flex size-7 items-center justify-center rounded-lg bg-accent text-accent-fg shadow-card">
        <svg viewBox="0 0 24 24" width="15" height="15" aria-hidden="true">
          <path d="M6 7h12M6 12h8M6 17h12" stroke="currentColor" strokeWidth="2.6" strokeLinecap="round" fill="none" />
        </svg>
      </div>
      <div className="leading-tight">
        <div className="text-[14px] font-semibold tracking-tight text-fg">eng</div>
        {compact ? null : <div className="text-[11px] text-faint">console</div>}
      </div>
    </div>
  );
}

export function Sidebar({
  className,
  onNavigate,
  onOpenPalette,
  onOpenHelp,
}: {
  className?: string;
  onNavigate?: () => void;
  onOpenPalette: () => void;
  onOpenHelp: () => void;
}) {
  const flowEnabled = useFlowEnabled();
  const { data: config } = useConsoleConfig();
  const presence = usePresence();
  const pages = PAGES.filter((p) => (!p.flowOnly || flowEnabled) && (!p.presence || presence[p.presence]));
  const sections = [...new Set(pages.map((p) => p.section))];
  return (
    <aside className={cn('w-60 shrink-0 flex-col border-r border-line bg-surface', className)}>
      <div className="flex h-14 items-center px-4">
        <Brand />
      </div>
      <div className="px-3 pb-2">
        <button
          type="button"
          onClick={onOpenPalette}
          className="flex h-8 w-full cursor-pointer items-center gap-2 rounded-lg border border-line bg-surface-2 px-2.5 text-[13px] text-faint transition-colors hover:border-line-strong hover:text-muted"
        >
          <Search size={14} />
          <span className="flex-1 text-left">Search…</span>
          <kbd className="rounded border border-line-strong px-1 font-sans text-[10.5px]">{isMac ? '⌘K' : 'Ctrl K'}</kbd>
        </button>
      </div>
      <nav aria-label="Main navigation" className="min-h-0 flex-1 overflow-y-auto px-3 pb-3">
        {sections.map((section) => (
          <div key={section} className="mt-3 first:mt-1">
            <div className="px-2 pb-1 text-[10.5px] font-semibold tracking-wider text-faint uppercase">{section}</div>
            <ul className="space-y-0.5">
              {pages
                .filter((p) => p.section === section)
                .map((page) => (
                  <li key={page.path}>
                    <NavItem page={page} onNavigate={onNavigate} />
                  </li>
                ))}
            </ul>
          </div>
        ))}
      </nav>
      <div className="space-y-2 border-t border-line p-3">
        <ConnectionPill />
        <div className="flex items-center justify-between gap-2">
          <LastUpdate />
          <div className="flex items-center">
            <button
              type="button"
              onClick={onOpenHelp}
              aria-label="Keyboard shortcuts"
              title="Keyboard shortcuts (?)"
              className="flex size-7 cursor-pointer items-center justify-center rounded-md text-faint hover:bg-surface-2 hover:text-fg"
            >
              <Keyboard size={15} />
            </button>
            <ThemeToggle />
          </div>
        </div>
        <div className="truncate px-0.5 text-[11px] text-faint" title="console version">
          {config?.available
            ? `${config.config.server === 'console-worker' ? 'console worker' : 'eng-console'} v${config.config.version}`
            : 'eng console'}
        </div>
      </div>
    </aside>
  );
}

function NavItem({ page, onNavigate }: { page: PageEntry; onNavigate?: () => void }) {
  const Icon = page.icon;
  return (
    <Link
      to={page.path}
      onClick={onNavigate}
      activeOptions={{ exact: page.path === '/', includeSearch: false }}
      className="group flex h-8 items-center gap-2.5 rounded-lg px-2 text-[13.5px] font-medium text-muted transition-colors hover:bg-surface-2 hover:text-fg data-[status=active]:bg-accent-soft data-[status=active]:text-accent"
    >
      <Icon size={16} strokeWidth={1.9} className="shrink-0" />
      <span className="flex-1">{page.label}</span>
      {page.flowOnly ? <span className="rounded bg-violet-soft px-1 text-[10px] text-violet">beta</span> : null}
    </Link>
  );
}
