import { createLazyRoute } from '@tanstack/react-router';
import { GitBranch } from 'lucide-react';
import { GatedPage } from '../components/presence/gated-page.tsx';
import { WorktreesPage } from '../components/worktrees/worktrees-page.tsx';

export const Route = createLazyRoute('/worktrees')({
  component: () => (
    <GatedPage
      surface="worktrees"
      title="Worktrees"
      description="Git worktrees, their branches and the sessions that own them"
      icon={GitBranch}
      fill
    >
      <WorktreesPage />
    </GatedPage>
  ),
});
