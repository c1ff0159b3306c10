// Bounces and complaints that reach our MX at a return-path address, end to end with real components: the real
// MTA delivers an email (so its envelope sender carries a real token), then a report about it arrives at the
// real MX over SMTP and the receive job reads it. Postfix writes the RFC 3464 DSNs of the first two tests itself
// (a relay it accepted for refuses the recipient, or defers it long enough for a delay warning); the others are
// hand-written after the RFCs (3464, 5965) and after the wording of qmail, Exchange and Gmail bounces.
// Feedback reports and non-standard bounces: test/inbound-reports.test.ts.
import test from 'ava';
import type { MtaWorld } from './helpers/mta.ts';
import { startPostfix, type Postfix } from './helpers/postfix.ts';
import { eventsOf, insertEmail, recipientsOf } from './helpers/emails.ts';
import type { TestTeam } from './helpers/platform.ts';
import { RCPT, dsn, startBounceWorld, type BounceWorld } from './helpers/bounce-world.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';
import { storedBytes } from './helpers/receive-job.ts';
import { RecipientInFlight } from '../inbound/receive/bounce.ts';
import { readReport } from '../inbound/receive/report.ts';
import { returnPathAddress } from '../shared/emails/mail-tokens.ts';
import { until } from './helpers/wait.ts';

const PF = 'pf-dsn.test';
const PF_SENDER = 'pf-dsn-sender.test';

let b: BounceWorld;
let w: MtaWorld;
let deps: ReceiveDeps;
let team: TestTeam;
const deliver = (to: string[], options: { cc?: string[] } = {}) => b.deliver(to, options);
const report = (returnPath: string, raw: string, from = '') => b.report(returnPath, raw, from);
const typesOf = (id: string) => b.typesOf(id);
const suppression = (t: TestTeam, email: string) => b.suppression(t, email);
let domain: { id: string; name: string };
let postfix: Postfix;
let pfTeam: TestTeam;
let pfDomain: { id: string; name: string };

test.before(async () => {
  b = await startBounceWorld();
  ({ w, deps, team, domain } = b);
  pfTeam = await w.p.createTeam();
  pfDomain = await w.sendingDomain(pfTeam, PF_SENDER);
  // Postfix is the MX of pf-dsn.test and relays to the sink, which refuses gone@ and defers slow@; Postfix's
  // bounces to our return-path host go to our MX, as the return path's MX record would send them.
  w.sink.script(`gone@${PF}`, {
    rcpt: `550 5.1.1 <gone@${PF}>: Recipient address rejected: User unknown in virtual mailbox table`,
  });
  w.sink.script(`slow@${PF}`, {
    rcpt: `450 4.2.1 <slow@${PF}>: Recipient address rejected: Mailbox busy, try again later`,
  });
  postfix = await startPostfix({
    host: '127.0.0.8',
    port: w.sink.port,
    domain: PF,
    relayTo: { host: '127.0.0.1', port: w.sink.port },
    known: [`gone@${PF}`, `slow@${PF}`],
    transports: { [`send.${PF_SENDER}`]: `smtp:[127.0.0.1]:${b.mxPort}` },
    // A delay warning at the first deferral instead of after 4 hours (qmgr warns once the time has passed).
    mainCf: ['delay_warning_time = 1s', 'bounce_size_limit = 50000'],
  });
  w.mx(PF, ['127.0.0.8']);
});
test.after.always(async () => {
  await postfix?.close();
  await b?.close();
});

async function waitForReport(emailId: string, ms = 30_000): Promise<string> {
  const row = await until(
    () => w.p.db('received_messages').where({ email_id: emailId, kind: 'bounce' }).orderBy('received_at').first('id'),
    { what: `a report for ${emailId} at our MX`, timeoutMs: ms, intervalMs: 100 },
  ).catch(async (err) => {
    throw new Error(`${(err as Error).message}; postfix log:\n${await postfix.log()}`);
  });
  return row.id;
}

test.serial(
  'Postfix refuses at its relay: its own RFC 3464 DSN comes back to our MX and bounces the recipient Permanent/NoEmail with a suppression',
  async (t) => {
    const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: pfTeam.id, domain: pfDomain, to: [`gone@${PF}`] });
    await processDelivery(w.deps, id);
    t.is((await recipientsOf(w.p.db, id)).get(`gone@${PF}`)?.status, 'delivered', 'Postfix took it with a 250');
    const messageId = await waitForReport(id);
    const raw = (await storedBytes(w.p, messageId))!.toString();
    t.regex(raw, /Content-Type: multipart\/report; report-type=delivery-status/);
    t.is(await processReceived(deps, messageId), 'processed');
    t.is((await storedBytes(w.p, messageId))?.toString(), raw, 'the report is kept once processed');
    t.like((await recipientsOf(w.p.db, id)).get(`gone@${PF}`), {
      status: 'bounced',
      bounce_type: 'Permanent',
      bounce_sub_type: 'NoEmail',
      enhanced_code: '5.1.1',
    });
    const bounced = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.bounced');
    t.deepEqual(bounced?.data.to, [`gone@${PF}`]);
    t.like(bounced?.data.bounce, { type: 'Permanent', subType: 'NoEmail' });
    t.regex(
      (bounced?.data.bounce as { diagnosticCode: string[] }).diagnosticCode[0],
      /^smtp; 550 5\.1\.1 <gone@pf-dsn\.test>: Recipient address rejected/,
    );
    t.like(await suppression(pfTeam, `gone@${PF}`), { origin: 'bounce', source_id: id });
    t.is((await w.p.db('emails').where({ id }).first()).last_event, 'bounced');
    t.falsy(await w.p.db('received_emails').where({ id: messageId }).first(), 'never a received email');
  },
);

test.serial("Postfix's delay warning (Action: delayed, 4.2.1) is read and changes nothing", async (t) => {
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: pfTeam.id, domain: pfDomain, to: [`slow@${PF}`] });
  await processDelivery(w.deps, id);
  const messageId = await waitForReport(id);
  const raw = (await storedBytes(w.p, messageId))!.toString();
  t.regex(raw, /Action: delayed/);
  t.regex(raw, /Status: 4\.2\.1/);
  t.is(await processReceived(deps, messageId), 'processed');
  t.is((await recipientsOf(w.p.db, id)).get(`slow@${PF}`)?.status, 'delivered');
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered']);
  t.falsy(await suppression(pfTeam, `slow@${PF}`));
});

test('an RFC 3464 DSN with 5.1.1 bounces the recipient it names (Original-Recipient before an alias), once however often it arrives', async (t) => {
  const { id, returnPath } = await deliver([`nobody@${RCPT}`, `fine@${RCPT}`]);
  t.regex(returnPath, new RegExp(`^bounces\\+[a-z2-7]{39}@send\\.${domain.name}$`));
  const raw = dsn({
    rcpt: `nobody.alias@store.${RCPT}`,
    original: `nobody@${RCPT}`,
    action: 'failed',
    status: '5.1.1',
    diagnostic: `smtp; 550 5.1.1 <nobody.alias@store.${RCPT}>: Recipient address rejected: User unknown in local recipient table`,
  });
  const first = await report(returnPath, raw);
  t.is(await processReceived(deps, first), 'processed');
  t.is(await processReceived(deps, first), 'skipped', 'a rerun of the job changes nothing');
  const second = await report(returnPath, raw);
  t.is(await processReceived(deps, second), 'processed', 'the same DSN delivered twice');
  const rs = await recipientsOf(w.p.db, id);
  t.like(rs.get(`nobody@${RCPT}`), {
    status: 'bounced',
    bounce_type: 'Permanent',
    bounce_sub_type: 'NoEmail',
    enhanced_code: '5.1.1',
  });
  t.is(rs.get(`fine@${RCPT}`)?.status, 'delivered');
  const events = await eventsOf(w.p.db, id);
  t.deepEqual(
    events.map((e) => e.type),
    ['email.sent', 'email.delivered', 'email.bounced'],
  );
  t.deepEqual(events[2].data.to, [`nobody@${RCPT}`]);
  t.deepEqual(events[2].data.bounce, {
    type: 'Permanent',
    subType: 'NoEmail',
    message: "The recipient's mail server says the address does not exist.",
    diagnosticCode: [
      `smtp; 550 5.1.1 <nobody.alias@store.${RCPT}>: Recipient address rejected: User unknown in local recipient table`,
    ],
  });
  t.like(await suppression(team, `nobody@${RCPT}`), { origin: 'bounce', source_id: id });
  t.is((await w.p.db('suppressions').where({ team_id: team.id, email: `nobody@${RCPT}` })).length, 1);
  t.is(
    (
      await w.p
        .db('events')
        .where({ team_id: team.id, type: 'suppression.added' })
        .whereRaw(`data->>'email' = ?`, [`nobody@${RCPT}`])
    ).length,
    1,
  );
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'bounced');
  t.is((await w.p.db('received_emails').whereIn('id', [first, second])).length, 0);
});

test('a DSN whose Diagnostic-Code is not SMTP classifies by its Status; a mailbox full (5.2.2) is Transient with no suppression', async (t) => {
  const { id, returnPath } = await deliver([`full@${RCPT}`]);
  const message = await report(
    returnPath,
    dsn({ rcpt: `full@${RCPT}`, action: 'failed', status: '5.2.2', diagnostic: 'X-Postfix; mailbox is over quota' }),
  );
  t.is(await processReceived(deps, message), 'processed');
  t.like((await recipientsOf(w.p.db, id)).get(`full@${RCPT}`), {
    status: 'bounced',
    bounce_type: 'Transient',
    bounce_sub_type: 'MailboxFull',
    last_response: '550 5.2.2 mailbox is over quota',
  });
  const bounced = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.bounced');
  t.deepEqual((bounced?.data.bounce as { diagnosticCode: string[] }).diagnosticCode, [
    'X-Postfix; mailbox is over quota',
  ]);
  t.falsy(await suppression(team, `full@${RCPT}`));
});

test('a delayed DSN (4.4.7) is logged and records nothing; a later failed one for the same recipient bounces it', async (t) => {
  const { id, returnPath } = await deliver([`later@${RCPT}`]);
  const delayed = await report(
    returnPath,
    dsn({
      rcpt: `later@${RCPT}`,
      action: 'delayed',
      status: '4.4.7',
      diagnostic: 'smtp; 451 4.4.7 Delivery time expired soon',
    }),
  );
  t.is(await processReceived(deps, delayed), 'processed');
  t.is((await recipientsOf(w.p.db, id)).get(`later@${RCPT}`)?.status, 'delivered');
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered']);
  // The remote MTA gave up after its own retries: a failure with a 4.x.x status is Undetermined, no suppression.
  const failed = await report(
    returnPath,
    dsn({
      rcpt: `later@${RCPT}`,
      action: 'failed',
      status: '4.4.7',
      diagnostic: 'smtp; 451 4.4.7 Delivery time expired',
    }),
  );
  t.is(await processReceived(deps, failed), 'processed');
  t.like((await recipientsOf(w.p.db, id)).get(`later@${RCPT}`), {
    status: 'bounced',
    bounce_type: 'Undetermined',
    bounce_sub_type: 'Undetermined',
  });
  t.falsy(await suppression(team, `later@${RCPT}`));
});

test('a forged or altered token is refused at RCPT with 550 5.1.1', async (t) => {
  const { returnPath } = await deliver([`forged@${RCPT}`]);
  const altered = returnPath.replace(/\+([a-z2-7])/, (_, c: string) => `+${c === 'a' ? 'b' : 'a'}`);
  const foreign = returnPathAddress(Buffer.alloc(32, 7), (await w.p.db('emails').first('id')).id, 'send', domain.name);
  for (const address of [altered, foreign]) {
    const error = await t.throwsAsync(
      report(
        address,
        dsn({ rcpt: `forged@${RCPT}`, action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 no' }),
      ),
    );
    t.is((error as { responseCode?: number }).responseCode, 550);
  }
});

test('an unparseable report, a report about a recipient the email does not have: processed, logged, no event, never a received email', async (t) => {
  const { id, returnPath } = await deliver([`kept@${RCPT}`]);
  const junk = await report(
    returnPath,
    'From: someone@else.example\r\nSubject: hello?\r\n\r\nIs this address read by a person?\r\n',
  );
  const stranger = await report(
    returnPath,
    dsn({ rcpt: `stranger@${RCPT}`, action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 unknown' }),
  );
  for (const message of [junk, stranger]) {
    t.is(await processReceived(deps, message), 'processed');
    t.is((await w.p.db('received_messages').where({ id: message }).first()).status, 'processed');
    t.falsy(await w.p.db('received_emails').where({ id: message }).first());
  }
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered']);
  t.is((await recipientsOf(w.p.db, id)).get(`kept@${RCPT}`)?.status, 'delivered');
  t.falsy(await suppression(team, `stranger@${RCPT}`));
});

test('a report about a recipient still being delivered (a live lease) leaves the message stored for the sweep', async (t) => {
  const { id, returnPath } = await deliver([`busy@${RCPT}`]);
  await w.p
    .db('email_recipients')
    .where({ email_id: id })
    .update({ status: 'deferred', leased_until: new Date(Date.now() + 600_000) });
  const message = await report(
    returnPath,
    dsn({ rcpt: `busy@${RCPT}`, action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 unknown' }),
  );
  await t.throwsAsync(processReceived(deps, message), { instanceOf: RecipientInFlight });
  t.is((await w.p.db('received_messages').where({ id: message }).first()).status, 'stored');
  await w.p.db('email_recipients').where({ email_id: id }).update({ leased_until: null });
  t.is(await processReceived(deps, message), 'processed', 'once the lease is over, the retry applies it');
  t.like((await recipientsOf(w.p.db, id)).get(`busy@${RCPT}`), { status: 'bounced', next_attempt_at: null });
  t.is((await w.p.db('emails').where({ id }).first()).status, 'done');
});

test('a report stored for another team than its email is ignored', async (t) => {
  const { id, returnPath } = await deliver([`moved@${RCPT}`]);
  const message = await report(
    returnPath,
    dsn({ rcpt: `moved@${RCPT}`, action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 unknown' }),
  );
  await w.p.db('received_messages').where({ id: message }).update({ team_id: pfTeam.id });
  t.is(await processReceived(deps, message), 'processed');
  t.deepEqual(await typesOf(id), ['email.sent', 'email.delivered']);
});

test('report reading: a base64 DSN naming two recipients; an inline original message never reads as the bounce text', (t) => {
  const status = Buffer.from(
    `Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; a@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\nFinal-Recipient: RFC822; <b@example.net>\r\nAction: delayed\r\nStatus: 4.02.01\r\nDiagnostic-Code: smtp;\r\n  452 4.2.1 busy\r\n`,
  ).toString('base64');
  const dsnRaw = Buffer.from(
    `Content-Type: multipart/report; report-type=delivery-status;\r\n boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--x\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n${status}\r\n--x--\r\n`,
  );
  const r = readReport(dsnRaw);
  t.is(r?.format, 'dsn');
  t.deepEqual(
    r?.findings.map((f) => [f.kind, f.addresses, f.status, f.diagnostic]),
    [
      ['failed', ['a@example.net'], '5.1.1', null],
      ['delayed', ['b@example.net'], '4.2.1', 'smtp; 452 4.2.1 busy'],
    ],
  );
  const inline = Buffer.from(
    'Subject: Undeliverable\r\nContent-Type: multipart/mixed; boundary=y\r\n\r\n--y\r\nContent-Type: text/plain\r\n\r\nYour message could not be delivered to one@example.net.\r\n550 5.1.1 unknown\r\n--y\r\nContent-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\nTo: one@example.net, two@example.net\r\nSubject: hi\r\n\r\nbody\r\n--y--\r\n',
  );
  const plain = readReport(inline);
  t.is(plain?.format, 'plain');
  t.deepEqual(
    plain?.findings.map((f) => f.addresses),
    [['one@example.net']],
  );
  t.deepEqual(plain?.originalRecipients, ['one@example.net', 'two@example.net']);
});
