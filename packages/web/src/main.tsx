import '@fontsource-variable/inter/wght.css';
import '@fontsource-variable/jetbrains-mono/wght.css';
import './styles/app.css';
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { engine, onEngineOpen } from './api/client.ts';
import { startLiveUpdates } from './api/live.ts';
import { bindQueriesToEngine } from './api/outage.ts';
import { queryClient } from './api/query-client.ts';
import { router } from './router.tsx';

engine();
bindQueriesToEngine();
startLiveUpdates(queryClient);
let opened = false;
// after an outage or an engine restart every cached answer may be stale
onEngineOpen(() => {
  if (opened) void queryClient.invalidateQueries();
  opened = true;
});

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
