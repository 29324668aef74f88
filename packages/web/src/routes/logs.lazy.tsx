import { createLazyRoute } from '@tanstack/react-router';
import { LogsPage } from '../components/logs/logs-page.tsx';

export const Route = createLazyRoute('/logs')({ component: LogsPage });
