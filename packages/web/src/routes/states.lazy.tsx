import { createLazyRoute } from '@tanstack/react-router';
import { StatesPage } from '../components/state/states-page.tsx';

export const Route = createLazyRoute('/states')({ component: StatesPage });
