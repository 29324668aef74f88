import { Moon, Sun } from 'lucide-react';
import { toggleTheme, useTheme } from '../../lib/theme.ts';

export function ThemeToggle() {
  const theme = useTheme();
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      onClick={toggleTheme}
      aria-label={`Switch to ${next} theme`}
      title={`Switch to ${next} theme (T)`}
      data-testid="theme-toggle"
      className="flex size-7 cursor-pointer items-center justify-center rounded-md text-faint hover:bg-surface-2 hover:text-fg"
    >
      {theme === 'dark' ? <Sun size={15} /> : <Moon size={15} />}
    </button>
  );
}
