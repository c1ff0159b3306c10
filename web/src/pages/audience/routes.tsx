// The audience pages (contacts, imports, segments, topics, contact properties), each loaded on first visit
// (React.lazy: a chunk of its own, so the dashboard's first load does not carry them). Routes under /dashboard.
import { lazy, Suspense, type ComponentType } from 'react';
import { Route } from 'react-router';
import { Loading } from '../../ui';
import './audience.css';

function page(load: () => Promise<{ default: ComponentType }>) {
  const Page = lazy(load);
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Page />
    </Suspense>
  );
}

export const audienceRoutes = (
  <>
    <Route path="contacts" element={page(() => import('./Contacts'))} />
    <Route path="contacts/imports" element={page(() => import('./Imports'))} />
    <Route path="contacts/imports/:id" element={page(() => import('./ImportPage'))} />
    <Route path="contacts/:id" element={page(() => import('./ContactPage'))} />
    <Route path="segments" element={page(() => import('./Segments'))} />
    <Route path="segments/new" element={page(() => import('./SegmentEdit'))} />
    <Route path="segments/:id" element={page(() => import('./SegmentEdit'))} />
    <Route path="topics" element={page(() => import('./Topics'))} />
    <Route path="contact-properties" element={page(() => import('./Properties'))} />
  </>
);
