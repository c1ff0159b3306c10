// The world of the bounce and complaint tests: the real MTA delivering to a scripted sink (so an email's
// envelope sender carries a real return-path token) and the real MX on loopback that reports come back to
// (startReportMx: that MX alone, beside any MtaWorld).
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { startMtaWorld, type MtaWorld } from './mta.ts';
import { eventsOf, insertEmail, recipientsOf } from './emails.ts';
import type { TestTeam } from './platform.ts';
import { processDelivery } from '../../mta/delivery/job.ts';
import { createMxServer } from '../../inbound/mx/server.ts';
import type { ReceiveDeps } from '../../inbound/receive/job.ts';
import { testTls } from './test-tls.ts';
import { secretsKey } from '../../shared/secrets.ts';

/** The recipients' domain: its MX is the sink. */
export const RCPT = 'rcpt-bounces.test';

export interface BounceWorld {
  w: MtaWorld;
  deps: ReceiveDeps;
  mxPort: number;
  team: TestTeam;
  domain: { id: string; name: string };
  /** Sends an email through the MTA to the sink; its envelope sender is the return path with the real token. */
  deliver(to: string[], options?: { cc?: string[] }): Promise<{ id: string; returnPath: string }>;
  /** Delivers `raw` to our MX from the null sender (RFC 3464 §2: a DSN's MAIL FROM is <>); the stored id. */
  report(returnPath: string, raw: string, from?: string): Promise<string>;
  typesOf(id: string): Promise<string[]>;
  suppression(t: TestTeam, email: string): Promise<{ origin: string; source_id: string | null } | undefined>;
  close(): Promise<void>;
}

/** Our MX on loopback, as inbound/main.ts wires it: where bounces and feedback reports come back to. */
export interface ReportMx {
  port: number;
  deps: ReceiveDeps;
  /** Delivers `raw` to the MX from the null sender (RFC 3464 §2: a DSN's MAIL FROM is <>); the stored id. */
  report(returnPath: string, raw: string, from?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startReportMx(w: MtaWorld): Promise<ReportMx> {
  const deps: ReceiveDeps = { db: w.p.db, blobs: w.p.deps.blobs, log: w.p.deps.log, secrets: secretsKey(w.p.config) };
  const mx: SMTPServer = createMxServer({
    ...deps,
    config: w.p.config,
    tls: await testTls(),
    enqueueReceive: async () => {},
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  const port = (mx.server.address() as AddressInfo).port;
  return {
    port,
    deps,
    async report(returnPath, raw, from = '') {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        tls: { rejectUnauthorized: false },
      });
      const info = await transport.sendMail({
        envelope: { from, to: [returnPath] },
        raw: raw.replace(/\r?\n/g, '\r\n'),
      });
      return /stored as (\S+)/.exec(info.response)![1];
    },
    close: () => new Promise<void>((resolve) => mx.close(() => resolve())),
  };
}

export async function startBounceWorld(): Promise<BounceWorld> {
  const w = await startMtaWorld();
  const mx = await startReportMx(w);
  w.mx(RCPT);
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, `bounce-sender-${process.pid}.test`);
  return {
    w,
    deps: mx.deps,
    mxPort: mx.port,
    team,
    domain,
    async deliver(to, options = {}) {
      const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to, cc: options.cc });
      await processDelivery(w.deps, id);
      const rs = await recipientsOf(w.p.db, id);
      for (const [address, r] of rs)
        if (r.status !== 'delivered') throw new Error(`${address} was not delivered: ${r.status}`);
      const copy = w.sink.messages.find((m) => m.raw.toString().includes(`<${id}@`));
      if (!copy) throw new Error('the sink did not receive the email');
      return { id, returnPath: copy.from };
    },
    report: mx.report,
    typesOf: async (id) => (await eventsOf(w.p.db, id)).map((e) => e.type),
    suppression: (t, email) => w.p.db('suppressions').where({ team_id: t.id, email }).first(),
    async close() {
      await mx.close();
      await w.close();
    },
  };
}

/** An RFC 3464 report about one recipient, as a receiving MTA writes it. */
export const dsn = (o: {
  rcpt: string;
  action: string;
  status: string;
  diagnostic: string;
  original?: string;
  to?: string;
  messageId?: string;
}) => `From: Mail Delivery System <MAILER-DAEMON@mx.${RCPT}>
To: bounces@example.com
Subject: Undelivered Mail Returned to Sender
Date: Sat, 22 Nov 2026 10:00:00 +0000
Message-ID: <dsn-${Math.random().toString(36).slice(2)}@mx.${RCPT}>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"

This is a MIME-encapsulated message.

--dsn-boundary
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.${RCPT}.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

--dsn-boundary
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.${RCPT}
Arrival-Date: Sat, 22 Nov 2026 09:59:58 +0000

${o.original ? `Original-Recipient: rfc822;${o.original}\n` : ''}Final-Recipient: rfc822; ${o.rcpt}
Action: ${o.action}
Status: ${o.status}
Remote-MTA: dns; store.${RCPT}
Diagnostic-Code: ${o.diagnostic}

--dsn-boundary
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

From: Sender <hello@example.com>
To: ${o.to ?? o.rcpt}
Subject: Hello
Message-ID: ${o.messageId ?? '<x@example.com>'}

--dsn-boundary--
`;

/** An RFC 5965 feedback report (ARF) about a message to `to`, as a mailbox provider's feedback loop sends it. */
export const arf = (o: { rcpt?: string; type?: string; to: string }) => `From: Feedback Loop <fbl@isp.example>
To: bounces@example.com
Subject: FW: Hello
Date: Sat, 22 Nov 2026 10:00:00 +0000
Message-ID: <arf-${Math.random().toString(36).slice(2)}@isp.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="arf-boundary"

--arf-boundary
Content-Type: text/plain; charset="US-ASCII"
Content-Transfer-Encoding: 7bit

This is an email abuse report for an email message received from IP 192.0.2.1 on Sat, 22 Nov 2026 09:58:00 +0000.
For more information about this format please see http://www.mipassoc.org/arf/.

--arf-boundary
Content-Type: message/feedback-report

Feedback-Type: ${o.type ?? 'abuse'}
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces@example.com>
${o.rcpt ? `Original-Rcpt-To: <${o.rcpt}>\n` : ''}Arrival-Date: Sat, 22 Nov 2026 09:58:00 +0000
Reporting-MTA: dns; mail.isp.example
Source-IP: 192.0.2.1
Authentication-Results: mail.isp.example; spf=pass smtp.mail=bounces@example.com

--arf-boundary
Content-Type: message/rfc822
Content-Disposition: inline

From: Sender <hello@example.com>
To: ${o.to}
Subject: Hello
Message-ID: <orig@example.com>
Date: Sat, 22 Nov 2026 09:57:00 +0000

Hello there

--arf-boundary--
`;
