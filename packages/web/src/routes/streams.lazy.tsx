import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

// Placeholder until this page is built (issue 6/7); the route, nav entry and palette entry already work.
export const Route = createLazyRoute('/streams')({
  component: () => <PagePlaceholder page="Streams" description="Streams, groups, stored items and the live WebSocket monitor." />,
});
