import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { SessionProvider } from './session';
import { Layout } from './pages/Layout';
import { SignIn } from './pages/auth/SignIn';
import { SignUp } from './pages/auth/SignUp';
import { Verify } from './pages/auth/Verify';
import { Reset } from './pages/auth/Reset';
import { Emails } from './pages/Emails';
import { EmailPage } from './pages/EmailPage';
import { ApiKeys } from './pages/ApiKeys';
import { Domains } from './pages/Domains';
import { DomainPage } from './pages/DomainPage';
import { Suppressions } from './pages/Suppressions';
import { invitationRoute, settingsRoutes } from './pages/settings/routes';
import { audienceRoutes } from './pages/audience/routes';
import { broadcastRoutes } from './pages/broadcasts/routes';
import { Templates } from './pages/templates/Templates';
import { TemplatePage } from './pages/templates/TemplatePage';
import { Consent } from './pages/oauth/Consent';
import { Overview } from './pages/ops/Overview';
import { Webhooks } from './pages/ops/Webhooks';
import { WebhookPage } from './pages/ops/WebhookPage';
import { WebhookEventPage } from './pages/ops/WebhookEvents';
import { LogPage, Logs } from './pages/ops/Logs';
import { Received } from './pages/ops/Received';
import { ReceivedPage } from './pages/ops/ReceivedPage';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <SessionProvider>
        <Routes>
          <Route path="/" element={<Navigate to="/dashboard/overview" replace />} />
          <Route path="/sign-in" element={<SignIn />} />
          <Route path="/sign-up" element={<SignUp />} />
          <Route path="/verify" element={<Verify />} />
          <Route path="/reset-password" element={<Reset />} />
          {invitationRoute}
          <Route path="/dashboard" element={<Layout />}>
            <Route index element={<Navigate to="/dashboard/overview" replace />} />
            <Route path="emails" element={<Emails />} />
            <Route path="emails/:id" element={<EmailPage />} />
            <Route path="api-keys" element={<ApiKeys />} />
            <Route path="domains" element={<Domains />} />
            <Route path="domains/:id" element={<DomainPage />} />
            <Route path="suppressions" element={<Suppressions />} />
            {settingsRoutes}
            {audienceRoutes}
            <Route path="templates" element={<Templates />} />
            <Route path="templates/:id" element={<TemplatePage />} />
            {broadcastRoutes}
            <Route path="overview" element={<Overview />} />
            <Route path="webhooks" element={<Webhooks />} />
            <Route path="webhooks/:id" element={<WebhookPage />} />
            <Route path="webhooks/:id/events/:eventId" element={<WebhookEventPage />} />
            <Route path="logs" element={<Logs />} />
            <Route path="logs/:id" element={<LogPage />} />
            <Route path="received" element={<Received />} />
            <Route path="received/:id" element={<ReceivedPage />} />
          </Route>
          <Route path="/oauth/consent/:uid" element={<Consent />} />
          <Route path="*" element={<p className="empty">No page here.</p>} />
        </Routes>
      </SessionProvider>
    </BrowserRouter>
  </StrictMode>,
);
