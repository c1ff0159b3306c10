// The whole sending path: a customer's app submits over SMTP and over REST; the MTA delivers both to the
// recipient's MX (a loopback sink found through the loopback DNS) signed with the domain's DKIM key.
import test from 'ava';
import nodemailer from 'nodemailer';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { liftSandbox } from '../shared/teams/teams.ts';

let w: MtaWorld;
let submission: Submission;
let port: number;

test.before(async () => {
  w = await startMtaWorld();
  submission = await startSubmission(w.p.deps, { implicitTls: false });
  port = submission.port;
});
test.after.always(async () => {
  await submission?.close();
  await w?.close();
});

test('SMTP submission and POST /emails both reach the recipient MX, DKIM-signed, with the email marked delivered', async (t) => {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const domain = await w.sendingDomain(team, 'e2e-sender.test');
  w.mx('e2e-inbox.test');

  const smtp = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass: team.key },
  });
  const info = await smtp.sendMail({
    from: `Shop <shop@${domain.name}>`,
    to: 'ann@e2e-inbox.test',
    bcc: 'audit@e2e-inbox.test',
    subject: 'Over SMTP',
    text: 'hello over smtp',
  });
  const smtpId = /queued as (\S+)/.exec(info.response)![1];
  const rest = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `shop@${domain.name}`,
      to: 'bob@e2e-inbox.test',
      subject: 'Over REST',
      html: '<p>hello over rest</p>',
    },
  });
  t.is(rest.status, 200, rest.text);

  for (const id of [smtpId, rest.body.id]) await processDelivery(w.deps, id);

  const [toAnn] = w.sink.deliveredTo('ann@e2e-inbox.test');
  const [toAudit] = w.sink.deliveredTo('audit@e2e-inbox.test');
  const [toBob] = w.sink.deliveredTo('bob@e2e-inbox.test');
  t.truthy(toAnn && toAudit && toBob);
  t.is(toAnn, toAudit, 'one transaction for the domain');
  t.regex(toAnn.from, new RegExp(`^bounces\\+[^@]+@send\\.${domain.name.replace('.', '\\.')}$`));
  const annRaw = toAnn.raw.toString();
  t.true(annRaw.includes('Subject: Over SMTP'));
  t.false(/^bcc:/im.test(annRaw), 'Bcc never reaches a recipient');
  t.true(toBob.raw.toString().includes('Subject: Over REST'));
  for (const m of [toAnn, toBob]) {
    const verdicts = await w.verifyDkim(m.raw);
    t.true(
      verdicts.some((v) => v.status === 'pass' && v.domain === domain.name),
      JSON.stringify(verdicts),
    );
  }

  for (const id of [smtpId, rest.body.id]) {
    const email = await w.p.request('GET', `/emails/${id}`, { key: team.key });
    t.is(email.body.last_event, 'delivered', id);
  }
  // One email.sent per email; one email.delivered per SMTP transaction, naming the recipients it delivered.
  const events = await w.p.db('events').where({ team_id: team.id }).whereLike('type', 'email.%').orderBy('id');
  t.deepEqual(events.map((e) => e.type).sort(), ['email.delivered', 'email.delivered', 'email.sent', 'email.sent']);
  const smtpDelivered = events.find((e) => e.type === 'email.delivered' && e.data.email_id === smtpId);
  t.deepEqual([...smtpDelivered.data.to].sort(), ['ann@e2e-inbox.test', 'audit@e2e-inbox.test']);
});
