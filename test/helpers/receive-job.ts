// The real MX on loopback for tests of the receive job: a team with a receiving domain, and a message sent
// through SMTP to it, stored by the MX (received_messages row, its raw bytes in received_raw or a blob) and left for
// processReceived.
import type { AddressInfo } from 'node:net';
import test from 'ava';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { createMxServer } from '../../inbound/mx/server.ts';
import { testTls } from './test-tls.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { newId } from '../../shared/ids.ts';
import type { ReceiveDeps } from '../../inbound/receive/job.ts';
import { readRaw } from '../../shared/receiving/raw.ts';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';

export interface TestMx {
  /** The job's base dependencies; a test adds a scanner or an authenticator. */
  deps: ReceiveDeps;
  /** The MX's loopback port, for tests that speak SMTP themselves. */
  port: number;
  receivingTeam(domain: string): Promise<{ team: TestTeam; domain: { id: string; name: string } }>;
  /** Sends through the MX; answers the stored message's id. */
  send(to: string[], mail: Record<string, unknown>, envelopeFrom?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startTestMx(p: Platform): Promise<TestMx> {
  const deps: ReceiveDeps = { db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) };
  const mx: SMTPServer = createMxServer({
    ...deps,
    config: p.config,
    tls: await testTls(),
    enqueueReceive: async () => {},
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  const port = (mx.server.address() as AddressInfo).port;
  return {
    deps,
    port,
    async receivingTeam(name) {
      const team = await p.createTeam();
      const id = newId();
      await p.db('domains').insert({ id, team_id: team.id, name, status: 'verified', receiving: 'enabled' });
      return { team, domain: { id, name } };
    },
    async send(to, mail, envelopeFrom = 'alice@sender.test') {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        tls: { rejectUnauthorized: false },
      });
      const info = await transport.sendMail({ ...mail, envelope: { from: envelopeFrom, to } });
      return /stored as (\S+)/.exec(info.response)![1];
    },
    close: () => new Promise<void>((resolve) => mx.close(() => resolve())),
  };
}

/** The bytes stored for an accepted message, wherever they are (received_raw, or the blob store when large). */
export async function storedBytes(p: Platform, id: string): Promise<Buffer | null> {
  const row = await p.db('received_messages').where({ id }).first('id', 'raw_blob_key');
  return row ? readRaw(p.db, p.deps.blobs, row) : null;
}

/** A test file's platform (with `env`) and MX on it: started before its tests, closed after them. */
export function mxForFile(env: Record<string, string> = {}): { p: Platform; mx: TestMx } {
  const world = {} as { p: Platform; mx: TestMx };
  test.before(async () => {
    world.p = await startPlatform(env);
    world.mx = await startTestMx(world.p);
  });
  test.after.always(async () => {
    await world.mx?.close();
    await world.p?.close();
  });
  return world;
}
