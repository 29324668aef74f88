import { createLazyRoute } from '@tanstack/react-router';
import { FunctionsPage } from '../components/functions/functions-page.tsx';

export const Route = createLazyRoute('/functions')({ component: FunctionsPage });
