// A domain's TLS policy (`tls`, as Resend's): `opportunistic` by default (STARTTLS when offered, else in the
// clear), `enforced` never in the clear. Set through the API, kept on the domain, and obeyed by the mta against
// real receivers on loopback: one that offers STARTTLS and one that does not.
import test from 'ava';
import { apiSender, attemptsOf, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';

let w: MtaWorld;
let plain: SmtpSink;
test.before(async () => {
  w = await startMtaWorld();
  // A receiver without STARTTLS on the same port, at another loopback address.
  plain = await startSmtpSink({ host: '127.0.0.3', port: w.sink.port, starttls: false });
});
test.after.always(async () => {
  await plain?.close();
  await w?.close();
});

test('the policy is opportunistic unless set; enforced is kept, shown, and anything else refused', async (t) => {
  const team = await w.p.createTeam();
  const made = await w.p.request('POST', '/domains', { key: team.key, body: { name: 'tls-policy.test' } });
  t.is(made.status, 201);
  t.is(made.body.tls, 'opportunistic');
  const strict = await w.p.request('POST', '/domains', {
    key: team.key,
    body: { name: 'tls-strict.test', tls: 'enforced' },
  });
  t.is(strict.body.tls, 'enforced');
  t.is((await w.p.request('GET', `/domains/${strict.body.id}`, { key: team.key })).body.tls, 'enforced');

  const patched = await w.p.request('PATCH', `/domains/${made.body.id}`, { key: team.key, body: { tls: 'enforced' } });
  t.deepEqual(patched.body, { object: 'domain', id: made.body.id });
  t.is((await w.p.request('GET', `/domains/${made.body.id}`, { key: team.key })).body.tls, 'enforced');
  const updated = await w.p.db('events').where({ team_id: team.id, type: 'domain.updated' });
  t.is(updated.at(-1).data.tls, 'enforced', 'the domain.updated event carries it');

  const wrong = await w.p.request('PATCH', `/domains/${made.body.id}`, { key: team.key, body: { tls: 'sometimes' } });
  t.is(wrong.status, 422);
  t.is(wrong.body.name, 'validation_error');
  t.regex(JSON.stringify(wrong.body), /tls/);
  t.is((await w.p.request('GET', `/domains/${made.body.id}`, { key: team.key })).body.tls, 'enforced');
});

/**
 * PATCH /domains/{id} with `tls: enforced`. The world marks its sending domains verified without their records, and an
 * update derives the status from the records again: it is marked verified again, as it was.
 */
async function enforce(sender: Awaited<ReturnType<typeof apiSender>>): Promise<void> {
  const res = await w.p.request('PATCH', `/domains/${sender.domain.id}`, {
    key: sender.team.key,
    body: { tls: 'enforced' },
  });
  if (res.status !== 200) throw new Error(`PATCH answered ${res.status} ${res.text}`);
  await w.p.db('domains').where({ id: sender.domain.id }).update({ status: 'verified' });
}

test('enforced: a receiver without STARTTLS gets nothing, even over a session another domain left pooled; the recipient waits', async (t) => {
  w.mx('no-tls-rcpt.test', ['127.0.0.3']);
  // An opportunistic domain's mail goes in the clear, and its session stays pooled.
  const relaxed = await apiSender(w, 'tls-relaxed-sender.test');
  const first = await relaxed.send({ to: 'ann@no-tls-rcpt.test' });
  await processDelivery(w.deps, first);
  t.is(plain.deliveredTo('ann@no-tls-rcpt.test').length, 1);

  const strict = await apiSender(w, 'tls-strict-sender.test');
  await enforce(strict);
  const id = await strict.send({ to: 'bob@no-tls-rcpt.test' });
  await processDelivery(w.deps, id);
  t.is(plain.deliveredTo('bob@no-tls-rcpt.test').length, 0, 'nothing sent in the clear');
  const recipient = (await recipientsOf(w.p.db, id)).get('bob@no-tls-rcpt.test')!;
  t.is(recipient.status, 'deferred');
  t.regex(recipient.last_response ?? '', /^421 4\.7\.4 ENOTLS: the sending domain requires TLS \(tls: enforced\)/);
  t.regex(recipient.last_response ?? '', /mx\.no-tls-rcpt\.test did not offer STARTTLS; not sent in the clear/);
  t.truthy(recipient.next_attempt_at, 'tried again later');
  const [attempt] = await attemptsOf(w, strict.team.key, id);
  t.like(attempt, { outcome: 'deferred', tls: false, mx_host: 'mx.no-tls-rcpt.test' });
  t.regex(attempt.transcript!, /did not offer STARTTLS; not sent in the clear/);
  t.regex(attempt.transcript!, /reusing the session to mx\.no-tls-rcpt\.test \[127\.0\.0\.3\]:\d+ \(no TLS\)/);
  t.notRegex(attempt.transcript!, /C: MAIL FROM/, 'no transaction began');

  // The pooled session was not spoiled for the opportunistic domain.
  const after = await relaxed.send({ to: 'cy@no-tls-rcpt.test' });
  await processDelivery(w.deps, after);
  t.is(plain.deliveredTo('cy@no-tls-rcpt.test').length, 1);
});

test('enforced: a host without STARTTLS is passed over for the next MX, which encrypts', async (t) => {
  w.dns.set('two-mx-rcpt.test', 'MX', [
    { exchange: 'plain.two-mx-rcpt.test', priority: 10 },
    { exchange: 'tls.two-mx-rcpt.test', priority: 20 },
  ]);
  w.dns.set('plain.two-mx-rcpt.test', 'A', ['127.0.0.3']);
  w.dns.set('tls.two-mx-rcpt.test', 'A', ['127.0.0.1']);
  const strict = await apiSender(w, 'tls-two-mx-sender.test');
  await enforce(strict);
  const id = await strict.send({ to: 'dee@two-mx-rcpt.test' });
  await processDelivery(w.deps, id);

  t.is(plain.deliveredTo('dee@two-mx-rcpt.test').length, 0);
  const [message] = w.sink.deliveredTo('dee@two-mx-rcpt.test');
  t.true(message.secure, 'delivered over STARTTLS');
  t.like((await recipientsOf(w.p.db, id)).get('dee@two-mx-rcpt.test'), {
    status: 'delivered',
    mx_host: 'tls.two-mx-rcpt.test',
  });
  const [attempt] = await attemptsOf(w, strict.team.key, id);
  t.like(attempt, { outcome: 'delivered', tls: true, mx_host: 'tls.two-mx-rcpt.test' });
  t.regex(attempt.transcript!, /plain\.two-mx-rcpt\.test did not offer STARTTLS/);
});
