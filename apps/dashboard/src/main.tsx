import { ApiProblem } from '@switchyard/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './app/theme.css';
import './app/app.css';
import { router } from './app/router.tsx';
import { ConnectionProvider } from './connection/connection.tsx';
import { LiveProvider } from './live/live-events.tsx';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // Live events refresh what changed; a refetch on focus catches anything missed meanwhile.
      staleTime: 10_000,
      // A 4xx answer will not change by asking again; network failures and 5xx are retried.
      retry: (count, error) =>
        !(error instanceof ApiProblem && error.status >= 400 && error.status < 500) && count < 3,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ConnectionProvider>
        <LiveProvider>
          <RouterProvider router={router} />
        </LiveProvider>
      </ConnectionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
