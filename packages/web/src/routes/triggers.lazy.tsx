import { createLazyRoute } from '@tanstack/react-router';
import { TriggersPage } from '../components/triggers/triggers-page.tsx';

export const Route = createLazyRoute('/triggers')({ component: TriggersPage });
