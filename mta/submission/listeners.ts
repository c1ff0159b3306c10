// The two submission listeners (STARTTLS on SMTP_SUBMISSION_PORT, implicit TLS on SMTP_SUBMISSION_TLS_PORT) on one
// set of dependencies: opened together, closed together (sessions in progress finish, SMTPServer's closeTimeout).
import type { SMTPServer } from 'smtp-server';
import { listen } from '../../shared/startup.ts';
import { createSubmissionServer, type SubmissionDeps } from './server.ts';

export interface SubmissionListeners {
  listen(): Promise<void>;
  close(): Promise<void>;
}

export function submissionListeners(deps: SubmissionDeps): SubmissionListeners {
  const { config } = deps;
  const maxBytes = config.SMTP_SUBMISSION_MAX_BYTES;
  const listeners: { server: SMTPServer; port: number; variable: string }[] = [
    {
      server: createSubmissionServer(deps, { implicitTls: false, maxBytes }),
      port: config.SMTP_SUBMISSION_PORT,
      variable: 'SMTP_SUBMISSION_PORT',
    },
    {
      server: createSubmissionServer(deps, { implicitTls: true, maxBytes }),
      port: config.SMTP_SUBMISSION_TLS_PORT,
      variable: 'SMTP_SUBMISSION_TLS_PORT',
    },
  ];
  return {
    async listen() {
      await Promise.all(listeners.map((l) => listen(l.server.server, l.port, config.SMTP_HOST, l.variable)));
    },
    async close() {
      await Promise.all(listeners.map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
