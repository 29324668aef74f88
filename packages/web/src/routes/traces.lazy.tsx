import { createLazyRoute } from '@tanstack/react-router';
import { TracesPage } from '../components/traces/traces-page.tsx';

export const Route = createLazyRoute('/traces')({ component: TracesPage });
