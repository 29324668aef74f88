import { createLazyRoute } from '@tanstack/react-router';
import { DashboardPage } from '../components/dashboard/dashboard-page.tsx';

export const Route = createLazyRoute('/')({ component: DashboardPage });
