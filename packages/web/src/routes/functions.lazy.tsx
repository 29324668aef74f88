import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

export const Route = createLazyRoute('/functions')({
  component: () => <PagePlaceholder page="Functions" description="Registered functions, schemas and Invoke." />,
});
