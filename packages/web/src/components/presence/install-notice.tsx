import { PlugZap } from 'lucide-react';
import { SURFACES, type Surface } from '../../api/presence.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { EmptyState } from '../ui/empty-state.tsx';

/**
 * What a direct visit to a presence-gated route shows while its worker is absent (seed 2.9
 * "Worktrees", issue 7 §8): which worker is missing and the command that installs it. The page
 * appears by itself once the worker connects (the function list is live).
 */
export function InstallNotice({ surface, title }: { surface: Surface; title: string }) {
  const info = SURFACES[surface];
  return (
    <EmptyState
      icon={PlugZap}
      title={`${title} needs the ${info.worker}`}
      className="mx-auto"
      action={<InstallCommand command={info.install} />}
    >
      It is not connected to this engine. Install it into the engine's configuration, then restart the engine; this page appears as soon as
      the worker connects.
    </EmptyState>
  );
}

function InstallCommand({ command }: { command: string }) {
  return (
    <div data-testid="install-command" className="flex items-center gap-1 rounded-lg border border-line bg-surface-2 py-1 pr-1 pl-3">
      <code className="font-mono text-[13px] text-fg">{command}</code>
      <CopyButton text={command} label={`Copy "${command}"`} />
    </div>
  );
}
