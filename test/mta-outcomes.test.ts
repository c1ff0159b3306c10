// Outcomes per recipient against a scripted SMTP peer: deferrals on the CONTRACT schedule, bounces with the
// reply kept and a suppression, mixed RCPT answers, broken sessions, DNS answers that end delivery without a
// connection, the 72-hour limit, and delivery_delayed recorded once.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { eventsOf, insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { GIVE_UP_AFTER_MS } from '../mta/delivery/schedule.ts';

let w: MtaWorld;
let grumpy: SmtpSink;
test.before(async () => {
  w = await startMtaWorld();
  // A receiver that refuses every session at the greeting, on the same port at another loopback address.
  grumpy = await startSmtpSink({ host: '127.0.0.4', port: w.sink.port });
  grumpy.greeting('421 4.3.2 Too busy, try another MX');
});
test.after.always(async () => {
  await grumpy?.close();
  await w?.close();
});

const MIN = 60_000;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

async function setup(rcptDomain: string, to: string[], extra: { cc?: string[] } = {}) {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, `sender-${rcptDomain}`);
  w.mx(rcptDomain);
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to, ...extra });
  return { team, id };
}

test('4xx defers on the schedule (1 minute first), and the next attempt delivers', async (t) => {
  const { id } = await setup('soft.test', ['sam@soft.test']);
  w.sink.script('sam@soft.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const t0 = new Date();
  await processDelivery(w.deps, id, t0);
  let r = (await recipientsOf(w.p.db, id)).get('sam@soft.test')!;
  t.is(r.status, 'deferred');
  t.is(r.next_attempt_at?.getTime(), t0.getTime() + MIN);
  t.is(r.first_deferred_at?.getTime(), t0.getTime());
  t.is(r.last_response, '450 4.2.1 Mailbox busy, try later');
  t.is(r.enhanced_code, '4.2.1');
  t.is((await processDelivery(w.deps, id, at(t0, 30_000))).leased, 0, 'not due yet');
  const { raw_blob_key: rawKey } = await w.p.db('emails').where({ id }).first();
  t.regex(rawKey, new RegExp(`^emails/.+/${id}\\.[0-9a-f]{8}\\.eml$`), 'stored for the retry once deferred');

  w.sink.script('sam@soft.test', {});
  await processDelivery(w.deps, id, at(t0, MIN));
  r = (await recipientsOf(w.p.db, id)).get('sam@soft.test')!;
  t.is(r.status, 'delivered');
  t.is(r.attempts, 2);
  t.is(w.sink.deliveredTo('sam@soft.test').length, 1);
  t.deepEqual(
    (await eventsOf(w.p.db, id)).map((e) => e.type),
    ['email.sent', 'email.delivered'],
  );
  const attempts = await w.p.db('delivery_attempts').where({ email_id: id }).orderBy('id');
  t.deepEqual(
    attempts.map((a) => a.outcome),
    ['deferred', 'delivered'],
  );
  t.regex(attempts[0].transcript, /S: 450 4\.2\.1 Mailbox busy/);
});

test('5xx bounces with the reply and enhanced code kept; a hard bounce adds a suppression', async (t) => {
  const { team, id } = await setup('hard.test', ['gone@hard.test']);
  w.sink.script('gone@hard.test', { rcpt: '550 5.1.1 <gone@hard.test>: Recipient address rejected: User unknown' });
  await processDelivery(w.deps, id);
  const r = (await recipientsOf(w.p.db, id)).get('gone@hard.test')!;
  t.is(r.status, 'bounced');
  t.is(r.last_response, '550 5.1.1 <gone@hard.test>: Recipient address rejected: User unknown');
  t.is(r.enhanced_code, '5.1.1');
  t.deepEqual([r.bounce_type, r.bounce_sub_type], ['Permanent', 'NoEmail']);
  const suppression = await w.p.db('suppressions').where({ team_id: team.id, email: 'gone@hard.test' }).first();
  t.like(suppression, { origin: 'bounce', source_id: id });
  const events = await eventsOf(w.p.db, id);
  const bounced = events.find((e) => e.type === 'email.bounced')!;
  t.like(bounced.data, { to: ['gone@hard.test'], bounce: { type: 'Permanent', subType: 'NoEmail' } });
  t.deepEqual((bounced.data.bounce as { diagnosticCode: string[] }).diagnosticCode, [
    'smtp; 550 5.1.1 <gone@hard.test>: Recipient address rejected: User unknown',
  ]);
  t.truthy(await w.p.db('events').where({ team_id: team.id, type: 'suppression.added' }).first());
  const email = await w.p.db('emails').where({ id }).first();
  t.like(email, { status: 'done', last_event: 'bounced' });
});

test('one transaction, mixed RCPT answers: each recipient gets its own outcome; DATA goes to the accepted one', async (t) => {
  const { team, id } = await setup('mixed.test', ['ok@mixed.test', 'later@mixed.test', 'full@mixed.test']);
  w.sink.script('later@mixed.test', { rcpt: '452 4.2.2 Over quota for now' });
  w.sink.script('full@mixed.test', { rcpt: '552 5.2.2 Mailbox full' });
  await processDelivery(w.deps, id);
  const rs = await recipientsOf(w.p.db, id);
  t.deepEqual([...rs.values()].map((r) => [r.address, r.status]).sort(), [
    ['full@mixed.test', 'bounced'],
    ['later@mixed.test', 'deferred'],
    ['ok@mixed.test', 'delivered'],
  ]);
  t.deepEqual(
    [rs.get('full@mixed.test')!.bounce_type, rs.get('full@mixed.test')!.bounce_sub_type],
    ['Transient', 'MailboxFull'],
  );
  t.falsy(
    await w.p.db('suppressions').where({ team_id: team.id, email: 'full@mixed.test' }).first(),
    'a full mailbox is no reason to suppress',
  );
  const delivered = w.sink.messages.filter((m) => m.to.some((a) => a.endsWith('@mixed.test')));
  t.deepEqual(
    delivered.map((m) => m.to),
    [['ok@mixed.test']],
  );
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.is(attempt.outcome, 'partial');
  const email = await w.p.db('emails').where({ id }).first();
  t.like(email, { status: 'queued', last_event: 'bounced' });
});

test('a dropped connection and a peer that never answers both defer', async (t) => {
  const { id } = await setup('flaky.test', ['drop@flaky.test']);
  w.sink.script('drop@flaky.test', { rcpt: 'drop' });
  await processDelivery(w.deps, id);
  let r = (await recipientsOf(w.p.db, id)).get('drop@flaky.test')!;
  t.is(r.status, 'deferred');
  t.regex(r.last_response ?? '', /^421 4\.4\.2 /);

  const slow = await setup('slow.test', ['wait@slow.test']);
  w.sink.script('wait@slow.test', { data: 'hang' });
  await processDelivery(w.deps, slow.id);
  r = (await recipientsOf(w.p.db, slow.id)).get('wait@slow.test')!;
  t.is(r.status, 'deferred');
  t.regex(r.last_response ?? '', /ETIMEDOUT|ECONNECTION/);
});

test('null MX, no MX and no address, and NXDOMAIN bounce without connecting; SERVFAIL defers', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'sender-dns.test');
  w.dns.set('nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
  w.dns.set('nomail.test', 'TXT', ['v=spf1 -all']);
  w.dns.fail('broken.test', 'servfail');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: ['a@nullmx.test', 'b@nomail.test', 'c@nxdomain-here.test', 'd@broken.test'],
  });
  await processDelivery(w.deps, id);
  const rs = await recipientsOf(w.p.db, id);
  t.like(rs.get('a@nullmx.test'), {
    status: 'bounced',
    enhanced_code: '5.1.10',
    bounce_type: 'Permanent',
    mx_host: null,
  });
  t.like(rs.get('b@nomail.test'), { status: 'bounced', enhanced_code: '5.1.2' });
  t.like(rs.get('c@nxdomain-here.test'), { status: 'bounced', enhanced_code: '5.1.2' });
  t.like(rs.get('d@broken.test'), { status: 'deferred', enhanced_code: '4.4.3' });
  const attempts = await w.p.db('delivery_attempts').where({ email_id: id });
  t.true(attempts.every((a) => a.mx_host === null && a.transcript.startsWith('* DNS: ')));
});

test('the next MX is tried when one refuses the connection or answers 421 at the greeting', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'sender-multi.test');
  w.dns.set('multi.test', 'MX', [
    { exchange: 'mx1.multi.test', priority: 10 },
    { exchange: 'mx2.multi.test', priority: 20 },
    { exchange: 'mx3.multi.test', priority: 30 },
  ]);
  w.dns.set('mx1.multi.test', 'A', ['127.0.0.3']); // nothing listens there
  w.dns.set('mx2.multi.test', 'A', ['127.0.0.4']); // the grumpy one
  w.dns.set('mx3.multi.test', 'A', ['127.0.0.1']);
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to: ['m@multi.test'] });
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get('m@multi.test'), { status: 'delivered', mx_host: 'mx3.multi.test' });
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.regex(attempt.transcript, /127\.0\.0\.3[\s\S]*ECONNREFUSED|ECONNREFUSED[\s\S]*127\.0\.0\.3/);
  t.regex(attempt.transcript, /S: 421 4\.3\.2 Too busy/);
});

test('a message too large for the peer bounces as Transient/MessageTooLarge at DATA', async (t) => {
  const { team, id } = await setup('small.test', ['tiny@small.test']);
  w.sink.script('tiny@small.test', { data: '552 5.3.4 Message size exceeds fixed limit' });
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get('tiny@small.test'), {
    status: 'bounced',
    bounce_type: 'Transient',
    bounce_sub_type: 'MessageTooLarge',
  });
  t.falsy(await w.p.db('suppressions').where({ team_id: team.id }).first());
});

test('72 hours of deferrals end in a bounce of type Undetermined, without a suppression', async (t) => {
  const { team, id } = await setup('never.test', ['nope@never.test']);
  w.sink.script('nope@never.test', { rcpt: '451 4.7.1 Greylisted' });
  const t0 = new Date();
  await processDelivery(w.deps, id, t0);
  await processDelivery(w.deps, id, at(t0, GIVE_UP_AFTER_MS - MIN));
  let r = (await recipientsOf(w.p.db, id)).get('nope@never.test')!;
  t.is(r.status, 'deferred');
  t.is(r.next_attempt_at?.getTime(), t0.getTime() + GIVE_UP_AFTER_MS, 'the last retry lands on the 72-hour mark');
  await processDelivery(w.deps, id, at(t0, GIVE_UP_AFTER_MS));
  r = (await recipientsOf(w.p.db, id)).get('nope@never.test')!;
  t.like(r, {
    status: 'bounced',
    bounce_type: 'Undetermined',
    bounce_sub_type: 'Undetermined',
    last_response: '451 4.7.1 Greylisted',
  });
  t.falsy(await w.p.db('suppressions').where({ team_id: team.id }).first());
  const types = (await eventsOf(w.p.db, id)).map((e) => e.type);
  t.deepEqual(types, ['email.sent', 'email.delivery_delayed', 'email.bounced']);
});

test('delivery_delayed is recorded once, at the first deferral 15 minutes after the first', async (t) => {
  const { id } = await setup('late.test', ['lou@late.test']);
  w.sink.script('lou@late.test', { rcpt: '421 4.7.0 Try again later' });
  const t0 = new Date();
  const seen: string[] = [];
  // The retries of the schedule: +1 m, +6 m, +21 m, +51 m.
  for (const offset of [0, 1, 6, 21, 51]) {
    await processDelivery(w.deps, id, at(t0, offset * MIN));
    const email = await w.p.db('emails').where({ id }).first();
    seen.push(`${offset}:${email.last_event}`);
  }
  t.deepEqual(seen, ['0:sent', '1:sent', '6:sent', '21:delivery_delayed', '51:delivery_delayed']);
  const r = (await recipientsOf(w.p.db, id)).get('lou@late.test')!;
  t.is(r.next_attempt_at?.getTime(), t0.getTime() + 111 * MIN, 'then 1 hour');
  const events = (await eventsOf(w.p.db, id)).map((e) => e.type);
  t.is(events.filter((e) => e === 'email.delivery_delayed').length, 1);

  w.sink.script('lou@late.test', {});
  await processDelivery(w.deps, id, at(t0, 111 * MIN));
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'delivered');
});

test('our own failure (an attachment blob gone) defers as 451 4.3.0, never bounces, and fails after 72 h', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'sender-broken.test');
  w.mx('ours.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: ['x@ours.test'],
    attachments: [{ filename: 'a.txt', content: Buffer.from('a'), contentType: 'text/plain' }],
  });
  const attachment = await w.p.db('email_attachments').where({ email_id: id }).first();
  await w.p.deps.blobs.delete(attachment.blob_key);
  const t0 = new Date();
  await processDelivery(w.deps, id, t0);
  t.like((await recipientsOf(w.p.db, id)).get('x@ours.test'), { status: 'deferred', enhanced_code: '4.3.0' });
  await processDelivery(w.deps, id, at(t0, GIVE_UP_AFTER_MS));
  t.like((await recipientsOf(w.p.db, id)).get('x@ours.test'), { status: 'failed' });
  const failed = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.failed');
  t.like(failed?.data, { failed: { reason: 'delivery_failed' } });
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'failed');
});
