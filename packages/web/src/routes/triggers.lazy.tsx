import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

export const Route = createLazyRoute('/triggers')({
  component: () => <PagePlaceholder page="Triggers" description="HTTP, cron, event, queue and state bindings, with test tools." />,
});
