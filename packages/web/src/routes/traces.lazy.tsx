import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

// Placeholder until this page is built (issue 6/7); the route, nav entry and palette entry already work.
export const Route = createLazyRoute('/traces')({
  component: () => (
    <PagePlaceholder page="Traces" description="Trace list with filters, waterfall, flame graph, service breakdown and span details." />
  ),
});
