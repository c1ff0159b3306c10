// The audience pages (contacts, imports, segments, topics, contact properties), each loaded on first visit
// (React.lazy: a chunk of its own, so the dashboard's first load does not carry them). Routes under /dashboard.
import { lazy, Suspense, type ComponentType } from 'react';
import { Route } from 'react-router';
import { Loading } from '../../ui';
import './audience.css';

type Loader = () => Promise<{ default: ComponentType }>;

const contacts: Loader = () => import('./Contacts');
const imports: Loader = () => import('./Imports');
const importPage: Loader = () => import('./ImportPage');
const contactPage: Loader = () => import('./ContactPage');
const segments: Loader = () => import('./Segments');
const segmentEdit: Loader = () => import('./SegmentEdit');
const topics: Loader = () => import('./Topics');
const properties: Loader = () => import('./Properties');

// Opened at one of these URLs, its chunk is asked for at once, beside the session's requests, rather than once the
// session is known and the route renders (the browser keeps the module: lazy() gets it without a second request).
const FIRST: [RegExp, Loader][] = [
  [/^\/dashboard\/contacts\/?$/, contacts],
  [/^\/dashboard\/contacts\/imports\/?$/, imports],
  [/^\/dashboard\/contacts\/imports\/[^/]+$/, importPage],
  [/^\/dashboard\/contacts\/[^/]+$/, contactPage],
  [/^\/dashboard\/segments\/?$/, segments],
  [/^\/dashboard\/segments\/[^/]+$/, segmentEdit],
  [/^\/dashboard\/topics\/?$/, topics],
  [/^\/dashboard\/contact-properties\/?$/, properties],
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

export const audienceRoutes = (
  <>
    <Route path="contacts" element={page(contacts)} />
    <Route path="contacts/imports" element={page(imports)} />
    <Route path="contacts/imports/:id" element={page(importPage)} />
    <Route path="contacts/:id" element={page(contactPage)} />
    <Route path="segments" element={page(segments)} />
    <Route path="segments/new" element={page(segmentEdit)} />
    <Route path="segments/:id" element={page(segmentEdit)} />
    <Route path="topics" element={page(topics)} />
    <Route path="contact-properties" element={page(properties)} />
  </>
);
