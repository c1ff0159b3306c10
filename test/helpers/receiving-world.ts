// The receiving API's test world: a platform whose PUBLIC_BASE_URL is not where it listens, the real MX on
// loopback, and a delivery helper that sends over SMTP and runs the real receive job on every copy stored.
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { createMxServer } from '../../inbound/mx/server.ts';
import { processReceived, type ReceiveDeps } from '../../inbound/receive/job.ts';
import { testTls } from './test-tls.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { newId } from '../../shared/ids.ts';

import { BASE, local } from './attachments.ts';

export { BASE, PDF, local } from './attachments.ts';
export const REFUSED = 'This link is invalid or has expired.';
export const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);

export interface ReceivingWorld {
  p: Platform;
  deps: ReceiveDeps;
  /** A team with a verified receiving domain of its own. */
  receivingTeam(): Promise<{ team: TestTeam; domain: string }>;
  /** Delivers over SMTP to the MX, runs the receive job on every copy stored, answers the copies' ids. */
  deliver(to: string[], mail: Record<string, unknown>): Promise<string[]>;
  /** Sends over SMTP to the MX and answers the id its 250 names, without running the receive job. */
  send(mail: Record<string, unknown>): Promise<string>;
  deliverOne(to: string, mail: Record<string, unknown>): Promise<string>;
  download(url: string, prefix?: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * `env`: more settings of the platform (a test may name another PUBLIC_BASE_URL); `authenticator`: the receive job's
 * SPF, DKIM, DMARC and ARC checks (none unless given).
 */
export async function startReceivingWorld(
  env: Record<string, string> = {},
  options: Pick<ReceiveDeps, 'authenticator'> = {},
): Promise<ReceivingWorld> {
  const p = await startPlatform({ PUBLIC_BASE_URL: BASE, ...env });
  const deps: ReceiveDeps = {
    db: p.db,
    blobs: p.deps.blobs,
    log: p.deps.log,
    secrets: secretsKey(p.config),
    ...options,
  };
  /** Every message id the MX stored, keyed by the first (the one its 250 names). */
  const stored = new Map<string, string[]>();
  const mx: SMTPServer = createMxServer({
    ...deps,
    config: p.config,
    tls: await testTls(),
    enqueueReceive: async (list) => void stored.set(list[0], list),
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  const port = (mx.server.address() as AddressInfo).port;
  const transport = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
  const send = async (mail: Record<string, unknown>) =>
    /stored as (\S+)/.exec((await transport().sendMail(mail)).response)![1];
  const deliver = async (to: string[], mail: Record<string, unknown>) => {
    const copies = stored.get(
      await send({ from: 'alice@sender.test', ...mail, envelope: { from: 'alice@sender.test', to } }),
    )!;
    for (const id of copies)
      if ((await processReceived(deps, id)) !== 'processed') throw new Error(`not processed: ${id}`);
    return copies;
  };
  return {
    p,
    deps,
    deliver,
    send,
    async receivingTeam() {
      const team = await p.createTeam();
      const domain = `rx-${Math.random().toString(36).slice(2, 10)}.test`;
      await p
        .db('domains')
        .insert({ id: newId(), team_id: team.id, name: domain, status: 'verified', receiving: 'enabled' });
      return { team, domain };
    },
    deliverOne: async (to, mail) => (await deliver([to], mail))[0],
    download: (url, prefix = '') =>
      fetch(p.url + prefix + local(url), { headers: { 'user-agent': 'mail-client/1.0' } }),
    async close() {
      await new Promise<void>((resolve) => mx.close(() => resolve()));
      await p.close();
    },
  };
}
