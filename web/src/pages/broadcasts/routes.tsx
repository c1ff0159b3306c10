// The broadcasts pages (the list, the composer of a draft, a sent broadcast's report), each loaded on first visit
// (React.lazy: chunks of their own, the block editor among them, so the dashboard's first load does not carry them).
import { lazy, Suspense, type ComponentType } from 'react';
import { Route } from 'react-router';
import { Loading } from '../../ui';

type Loader = () => Promise<{ default: ComponentType }>;

const list: Loader = () => import('./Broadcasts');
const one: Loader = () => import('./BroadcastPage');

// Opened at one of these URLs, its chunk is asked for at once, beside the session's requests.
const FIRST: [RegExp, Loader][] = [
  [/^\/dashboard\/broadcasts\/?$/, list],
  [/^\/dashboard\/broadcasts\/[^/]+$/, one],
];
void FIRST.find(([pattern]) => pattern.test(window.location.pathname))?.[1]().catch(() => undefined);

function page(load: Loader) {
  const Page = lazy(load);
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Page />
    </Suspense>
  );
}

export const broadcastRoutes = (
  <>
    <Route path="broadcasts" element={page(list)} />
    <Route path="broadcasts/:id" element={page(one)} />
  </>
);
