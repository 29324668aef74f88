import { createLazyRoute } from '@tanstack/react-router';
import { QueuesPage } from '../components/queues/queues-page.tsx';

export const Route = createLazyRoute('/queues')({ component: QueuesPage });
