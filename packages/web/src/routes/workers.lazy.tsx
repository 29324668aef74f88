import { createLazyRoute } from '@tanstack/react-router';
import { WorkersPage } from '../components/workers/workers-page.tsx';

export const Route = createLazyRoute('/workers')({ component: WorkersPage });
