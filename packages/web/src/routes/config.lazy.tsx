import { createLazyRoute } from '@tanstack/react-router';
import { ConfigPage } from '../components/config/config-page.tsx';

export const Route = createLazyRoute('/config')({ component: ConfigPage });
