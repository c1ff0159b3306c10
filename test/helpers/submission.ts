// Our SMTP submission listener (mta/submission/server.ts) on a loopback port, for a test's platform, with the
// machine's self-signed test certificate (helpers/test-tls.ts).
import type { AddressInfo } from 'node:net';
import { createSubmissionServer, type SubmissionDeps } from '../../mta/submission/server.ts';
import { testTls } from './test-tls.ts';

export interface Submission {
  port: number;
  close(): Promise<void>;
}

export async function startSubmission(
  deps: Omit<SubmissionDeps, 'tls'>,
  options: { implicitTls: boolean; maxBytes?: number },
): Promise<Submission> {
  const server = createSubmissionServer({ ...deps, tls: await testTls() }, options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
