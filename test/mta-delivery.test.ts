// The MTA delivering to a real SMTP peer on loopback: composition, headers, DKIM, envelope sender, STARTTLS,
// grouping by domain, and the recipient states and events of a delivery.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { eventsOf, insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { composeMessage } from '../mta/delivery/compose.ts';
import { readReturnPathAddress, readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';

let w: MtaWorld;
let plain: SmtpSink;
test.before(async () => {
  w = await startMtaWorld();
  // A second receiver without STARTTLS on the same port, at another loopback address.
  plain = await startSmtpSink({ host: '127.0.0.2', port: w.sink.port, starttls: false });
});
test.after.always(async () => {
  await plain?.close();
  await w?.close();
});

test('an API email is composed, DKIM-signed, sent over STARTTLS with the return-path envelope, and recorded delivered', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'shop-alpha.test');
  w.mx('alpha-rcpt.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    from: 'Shop <orders@shop-alpha.test>',
    to: ['ann@alpha-rcpt.test'],
    bcc: ['hidden@alpha-rcpt.test'],
    subject: 'Your order',
    text: 'Your order\nhas shipped.\n',
    tags: [{ name: 'kind', value: 'receipt' }],
    attachments: [{ filename: 'r.txt', content: Buffer.from('receipt body'), contentType: 'text/plain' }],
  });
  const summary = await processDelivery(w.deps, id);
  t.is(summary.leased, 2);

  const [message] = w.sink.deliveredTo('ann@alpha-rcpt.test');
  t.truthy(message);
  t.true(message.secure, 'STARTTLS was offered, so it was used');
  t.deepEqual(
    message.to.sort(),
    ['ann@alpha-rcpt.test', 'hidden@alpha-rcpt.test'],
    'one transaction for the domain, both RCPTs',
  );
  t.is(readReturnPathAddress(w.deps.secrets, message.from), id);
  t.true(message.from.endsWith('@send.shop-alpha.test'));

  const parsed = await simpleParser(message.raw);
  t.is(parsed.messageId, `<${id}@shop-alpha.test>`);
  t.truthy(parsed.date);
  t.is(parsed.subject, 'Your order');
  t.is(parsed.headers.get('bcc'), undefined, 'Bcc never reaches the headers');
  t.is(parsed.attachments[0]?.content.toString(), 'receipt body');
  t.false(parsed.headers.has('list-unsubscribe'), 'no topic, no broadcast: no List-Unsubscribe');

  const dkim = await w.verifyDkim(message.raw);
  t.deepEqual(
    dkim.map((d) => [d.status, d.domain, d.selector]),
    [['pass', 'shop-alpha.test', domain.selector]],
  );

  const recipients = await recipientsOf(w.p.db, id);
  for (const r of recipients.values()) {
    t.is(r.status, 'delivered');
    t.is(r.attempts, 1);
    t.is(r.leased_until, null);
    t.is(r.mx_host, 'mx.alpha-rcpt.test');
    t.regex(r.last_response ?? '', /^250 /);
  }
  const email = await w.p.db('emails').where({ id }).first();
  t.is(email.status, 'done');
  t.is(email.last_event, 'delivered');
  t.is(email.raw_blob_key, null, 'delivered at the first attempt: sent from memory, never stored');
  const again = await composeMessage(w.deps, w.p.db, email);
  t.true(
    message.raw.toString('latin1').endsWith(again.toString('latin1')),
    'composing again gives the bytes that were sent (after the DKIM header)',
  );
  t.false(/(?<!\r)\n/.test(again.toString('latin1')), 'every line of the composed message ends in CRLF');
  const events = await eventsOf(w.p.db, id);
  t.deepEqual(
    events.map((e) => e.type),
    ['email.sent', 'email.delivered'],
  );
  t.deepEqual(events[0].data.tags, { kind: 'receipt' });
  t.deepEqual((events[1].data.to as string[]).sort(), ['ann@alpha-rcpt.test', 'hidden@alpha-rcpt.test']);

  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.is(attempt.outcome, 'delivered');
  t.true(attempt.tls);
  t.regex(attempt.transcript, /C: MAIL FROM:<bounces\+/);
  t.regex(attempt.transcript, /C: RCPT TO:<ann@alpha-rcpt\.test>/);
  t.regex(attempt.transcript, /S: 250 /);
  t.false(attempt.transcript.includes('receipt body'), 'DATA content stays out of the transcript');
});

test('a receiver without STARTTLS gets the message in the clear, and the attempt says so', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'shop-beta.test');
  w.mx('beta-rcpt.test', ['127.0.0.2']);
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to: ['bob@beta-rcpt.test'] });
  await processDelivery(w.deps, id);
  const [message] = plain.deliveredTo('bob@beta-rcpt.test');
  t.false(message.secure);
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.false(attempt.tls);
  t.regex(attempt.transcript, /in the clear/);
});

test('recipients are grouped by domain: one transaction per domain, each with its own RCPTs', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'shop-gamma.test');
  w.mx('gamma-one.test');
  w.mx('gamma-two.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: ['a@gamma-one.test', 'b@gamma-one.test'],
    cc: ['c@gamma-two.test'],
  });
  await processDelivery(w.deps, id);
  const forId = w.sink.messages.filter((m) => m.to.some((a) => /gamma-(one|two)\.test$/.test(a)));
  t.deepEqual(forId.map((m) => m.to.sort().join(',')).sort(), [
    'a@gamma-one.test,b@gamma-one.test',
    'c@gamma-two.test',
  ]);
  t.is(new Set(forId.map((m) => m.raw.toString())).size, 1, 'the same signed bytes go to every domain');
  const attempts = await w.p.db('delivery_attempts').where({ email_id: id }).orderBy('domain');
  t.deepEqual(
    attempts.map((a) => [a.domain, a.recipients.sort()]),
    [
      ['gamma-one.test', ['a@gamma-one.test', 'b@gamma-one.test']],
      ['gamma-two.test', ['c@gamma-two.test']],
    ],
  );
});

test('a topic send carries List-Unsubscribe with one-click (RFC 8058), covered by the DKIM signature', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'shop-delta.test');
  w.mx('delta-rcpt.test');
  const topic = await w.p.request('POST', '/topics', {
    key: team.key,
    body: { name: 'Deals', default_subscription: 'opt_in' },
  });
  t.is(topic.status, 201, topic.text);
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: ['dee@delta-rcpt.test'],
    topicId: topic.body.id,
  });
  await processDelivery(w.deps, id);
  const [message] = w.sink.deliveredTo('dee@delta-rcpt.test');
  const unfolded = message.raw.toString().replace(/\r\n[ \t]+/g, ' ');
  const url = /^List-Unsubscribe: <([^>]+)>/m.exec(unfolded)?.[1] ?? '';
  t.true(url.startsWith(`${w.p.config.PUBLIC_BASE_URL}/unsubscribe/`));
  const recipient = await w.p.db('email_recipients').where({ email_id: id }).first();
  t.is(readUnsubscribeToken(w.deps.secrets, url.split('/').pop()!), recipient.id, 'the link names the recipient');
  t.regex(message.raw.toString(), /List-Unsubscribe-Post: List-Unsubscribe=One-Click/);
  t.regex(message.raw.toString(), /h=[^;]*List-Unsubscribe-Post/i);
  t.deepEqual(
    (await w.verifyDkim(message.raw)).map((d) => d.status),
    ['pass'],
  );
});

for (const rawInBlobStore of [false, true]) {
  const where = rawInBlobStore ? 'the blob store (a large one)' : 'email_raw';
  test(`an SMTP-submitted message kept in ${where} is sent as submitted, with Message-ID and Date added when missing and Bcc removed`, async (t) => {
    const team = await w.p.createTeam();
    const name = rawInBlobStore ? 'shop-epb.test' : 'shop-eps.test';
    const rcptDomain = rawInBlobStore ? 'epb-rcpt.test' : 'eps-rcpt.test';
    const domain = await w.sendingDomain(team, name);
    w.mx(rcptDomain);
    const raw = Buffer.from(
      `From: a@${name}\r\nTo: eve@${rcptDomain}\r\nBcc: secret@${rcptDomain}\r\nSubject: raw\r\n\r\nRaw body line\r\n`,
    );
    const id = await insertEmail(w.p.db, w.p.deps.blobs, {
      teamId: team.id,
      domain,
      to: [`eve@${rcptDomain}`],
      raw,
      rawInBlobStore,
    });
    await processDelivery(w.deps, id);
    const [message] = w.sink.deliveredTo(`eve@${rcptDomain}`);
    const text = message.raw.toString();
    t.regex(text, new RegExp(`Message-ID: <${id}@${name}>`));
    t.regex(text, /^Date: /m);
    t.notRegex(text, /^Bcc:/im);
    t.regex(text, /Raw body line/);
    t.deepEqual(
      (await w.verifyDkim(message.raw)).map((d) => d.status),
      ['pass'],
    );
    const email = await w.p.db('emails').where({ id }).first();
    t.is(
      email.raw_blob_key,
      rawInBlobStore ? `emails/${team.id}/${id}/submitted.eml` : null,
      'the submitted message is never recomposed (nor stored again)',
    );
    t.is((await w.p.db('email_raw').where({ email_id: id })).length, rawInBlobStore ? 0 : 1);
  });
}

test('the managed domain signs with the platform key (d= MANAGED_DOMAIN_HOST; verified in mta-managed-dkim)', async (t) => {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  w.mx('zeta-rcpt.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain: managed,
    to: ['zed@zeta-rcpt.test'],
  });
  await processDelivery(w.deps, id);
  const [message] = w.sink.deliveredTo('zed@zeta-rcpt.test');
  const { MANAGED_DOMAIN_HOST: host, MANAGED_DKIM_SELECTOR: selector } = w.p.config;
  const signature = /^DKIM-Signature:.*?(?=\r\n\S)/ms.exec(message.raw.toString())?.[0] ?? '';
  t.true(signature.includes(` d=${host};`), signature);
  t.true(signature.includes(` s=${selector};`), signature);
  t.true(message.from.endsWith(`@send.${managed.name}`));
});
