import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

// Placeholder until this page is built (issue 6/7); the route, nav entry and palette entry already work.
export const Route = createLazyRoute('/states')({
  component: () => (
    <PagePlaceholder page="States" description="The key-value state store: groups, items with their real keys, add, edit and delete." />
  ),
});
