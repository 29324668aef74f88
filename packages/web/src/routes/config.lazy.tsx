import { createLazyRoute } from '@tanstack/react-router';
import { PagePlaceholder } from '../components/shell/page-placeholder.tsx';

export const Route = createLazyRoute('/config')({
  component: () => <PagePlaceholder page="Config" description="Connectivity, ports, OpenTelemetry settings and versions." />,
});
