import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

// Placeholder until this page is built (issue 6/7); the route, nav entry and palette entry already work.
export const Route = createLazyRoute('/queues')({
  component: () => (
    <PagePlaceholder page="Queues" description="Durable queues, depth, consumers, publish, and dead letters with redrive." />
  ),
});
