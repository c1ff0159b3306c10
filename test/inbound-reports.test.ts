// Feedback reports (RFC 5965) and bounces in the prose of qmail, Exchange and Gmail, reaching our MX at a
// real return-path address after the real MTA delivered the email (test/helpers/bounce-world.ts).
import test from 'ava';
import type { MtaWorld } from './helpers/mta.ts';
import { eventsOf, recipientsOf } from './helpers/emails.ts';
import type { TestTeam } from './helpers/platform.ts';
import { RCPT, arf, dsn, startBounceWorld, type BounceWorld } from './helpers/bounce-world.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';

let b: BounceWorld;
let w: MtaWorld;
let deps: ReceiveDeps;
let team: TestTeam;
const deliver = (to: string[], options: { cc?: string[] } = {}) => b.deliver(to, options);
const report = (returnPath: string, raw: string, from = '') => b.report(returnPath, raw, from);
const typesOf = (id: string) => b.typesOf(id);
const suppression = (t: TestTeam, email: string) => b.suppression(t, email);

test.before(async () => {
  b = await startBounceWorld();
  ({ w, deps, team } = b);
});
test.after.always(async () => {
  await b?.close();
});

test('an RFC 5965 abuse report records email.complained and a complaint suppression, once; last_event complained', async (t) => {
  const { id, returnPath } = await deliver([`angry@${RCPT}`, `calm@${RCPT}`]);
  const raw = arf({ rcpt: `angry@${RCPT}`, to: `angry@${RCPT}, calm@${RCPT}` });
  const first = await report(returnPath, raw, 'fbl@isp.example');
  t.is(await processReceived(deps, first), 'processed');
  t.is(await processReceived(deps, await report(returnPath, raw, 'fbl@isp.example')), 'processed');
  const events = await eventsOf(w.p.db, id);
  t.deepEqual(
    events.map((e) => e.type),
    ['email.sent', 'email.delivered', 'email.complained'],
  );
  t.deepEqual(events[2].data.to, [`angry@${RCPT}`]);
  t.is(events[2].data.email_id, id);
  t.like(await suppression(team, `angry@${RCPT}`), { origin: 'complaint', source_id: id });
  t.falsy(await suppression(team, `calm@${RCPT}`));
  const rs = await recipientsOf(w.p.db, id);
  t.is(rs.get(`angry@${RCPT}`)?.status, 'delivered', 'a complaint is no delivery state');
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'complained');
  t.falsy(await w.p.db('received_emails').where({ id: first }).first());
});

test('a complaint without Original-Rcpt-To is matched by the reported message To when it names one recipient; not-spam is ignored', async (t) => {
  const { id, returnPath } = await deliver([`redacted@${RCPT}`]);
  t.is(
    await processReceived(
      deps,
      await report(returnPath, arf({ type: 'not-spam', rcpt: `redacted@${RCPT}`, to: `redacted@${RCPT}` })),
    ),
    'processed',
  );
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered']);
  t.is(await processReceived(deps, await report(returnPath, arf({ to: `Someone <redacted@${RCPT}>` }))), 'processed');
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered', 'email.complained']);
  t.like(await suppression(team, `redacted@${RCPT}`), { origin: 'complaint' });
});

test('a complaint about a recipient that bounced asynchronously after delivery still counts and outranks the bounce', async (t) => {
  const { id, returnPath } = await deliver([`both@${RCPT}`]);
  await processReceived(
    deps,
    await report(
      returnPath,
      dsn({ rcpt: `both@${RCPT}`, action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' }),
    ),
  );
  t.like(await suppression(team, `both@${RCPT}`), { origin: 'bounce' });
  await processReceived(deps, await report(returnPath, arf({ rcpt: `both@${RCPT}`, to: `both@${RCPT}` })));
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered', 'email.bounced', 'email.complained']);
  t.like(
    await suppression(team, `both@${RCPT}`),
    { origin: 'complaint', source_id: id },
    'the stronger origin replaces the bounce',
  );
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'complained');
});

test('a qmail-send bounce ("Hi. This is the qmail-send program") bounces the address of its block', async (t) => {
  const { id, returnPath } = await deliver([`qgone@${RCPT}`, `qfine@${RCPT}`]);
  const raw = `From: MAILER-DAEMON@mail.${RCPT}
To: bounces@example.com
Subject: failure notice
Date: 22 Nov 2026 10:00:00 -0000
Message-ID: <q-${Date.now()}@mail.${RCPT}>

Hi. This is the qmail-send program at mail.${RCPT}.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<qgone@${RCPT}>:
192.0.2.25 does not like recipient.
Remote host said: 550 5.1.1 <qgone@${RCPT}>... User unknown
Giving up on 192.0.2.25.

--- Below this line is a copy of the message.

Return-Path: <${returnPath}>
Received: (qmail 1234 invoked from network); 22 Nov 2026 10:00:00 -0000
From: Sender <hello@example.com>
To: qgone@${RCPT}, qfine@${RCPT}
Subject: Hello

Hello there
`;
  t.is(await processReceived(deps, await report(returnPath, raw)), 'processed');
  const rs = await recipientsOf(w.p.db, id);
  t.like(rs.get(`qgone@${RCPT}`), { status: 'bounced', bounce_type: 'Permanent', bounce_sub_type: 'NoEmail' });
  t.is(rs.get(`qfine@${RCPT}`)?.status, 'delivered');
  const bounced = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.bounced');
  t.deepEqual((bounced?.data.bounce as { diagnosticCode: string[] }).diagnosticCode, [
    `smtp; 550 5.1.1 <qgone@${RCPT}>... User unknown`,
  ]);
  t.like(await suppression(team, `qgone@${RCPT}`), { origin: 'bounce' });
});

test('plain-text bounces in the Exchange and Gmail styles: the address and the quoted reply in the body', async (t) => {
  const exchange = await deliver([`exgone@${RCPT}`]);
  const exchangeRaw = `From: postmaster@${RCPT}
To: bounces@example.com
Subject: Undeliverable: Hello
Date: Sat, 22 Nov 2026 10:00:00 +0000
Message-ID: <ex-${Date.now()}@${RCPT}>
Content-Type: text/plain; charset="us-ascii"

Delivery has failed to these recipients or groups:

exgone@${RCPT}
The e-mail address you entered couldn't be found. Please check the recipient's e-mail address and try to resend the message.

Diagnostic information for administrators:

Generating server: EX01.${RCPT}

exgone@${RCPT}
Remote Server returned '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found'

Original message headers:

From: Sender <hello@example.com>
To: exgone@${RCPT}
Subject: Hello
`;
  t.is(await processReceived(deps, await report(exchange.returnPath, exchangeRaw)), 'processed');
  t.like((await recipientsOf(w.p.db, exchange.id)).get(`exgone@${RCPT}`), {
    status: 'bounced',
    bounce_type: 'Permanent',
    bounce_sub_type: 'NoEmail',
    last_response: '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found',
  });
  t.like(await suppression(team, `exgone@${RCPT}`), { origin: 'bounce', source_id: exchange.id });

  const gmail = await deliver([`gfull@${RCPT}`]);
  const gmailRaw = `From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: bounces@example.com
Subject: Delivery Status Notification (Failure)
Date: Sat, 22 Nov 2026 10:00:00 +0000
Message-ID: <g-${Date.now()}@mail.gmail.com>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="g-boundary"

--g-boundary
Content-Type: text/plain; charset="UTF-8"

** Message not delivered **

Your message wasn't delivered to gfull@${RCPT} because the recipient's inbox is full.

The response from the remote server was:
552 5.2.2 The email account that you tried to reach is over quota.

--g-boundary
Content-Type: message/rfc822

From: Sender <hello@example.com>
To: gfull@${RCPT}
Subject: Hello

Hello there
--g-boundary--
`;
  t.is(await processReceived(deps, await report(gmail.returnPath, gmailRaw)), 'processed');
  t.like((await recipientsOf(w.p.db, gmail.id)).get(`gfull@${RCPT}`), {
    status: 'bounced',
    bounce_type: 'Transient',
    bounce_sub_type: 'MailboxFull',
    enhanced_code: '5.2.2',
  });
  t.falsy(await suppression(team, `gfull@${RCPT}`), 'a full mailbox is no reason to stop sending');
});
