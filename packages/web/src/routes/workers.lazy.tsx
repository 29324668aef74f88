import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

export const Route = createLazyRoute('/workers')({
  component: () => <PagePlaceholder page="Workers" description="Connected worker processes and engine modules." />,
});
