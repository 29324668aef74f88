import { createLazyRoute } from '@tanstack/react-router';
import { FlowPage } from '../components/flow/flow-page.tsx';

export const Route = createLazyRoute('/flow')({ component: FlowPage });
