import { createLazyRoute } from '@tanstack/react-router';
import { StreamsPage } from '../components/streams/streams-page.tsx';

export const Route = createLazyRoute('/streams')({ component: StreamsPage });
