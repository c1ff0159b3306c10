// The official `resend` npm SDK, pointed at us with baseUrl, as a customer's app would use it.
import test from 'ava';
import { newId } from '../shared/ids.ts';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';

let p: Platform;
let dns: DnsServer;
let team: SendingTeam;
let resend: Resend;

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-one.test');
  team = await sendingTeam(p, dns);
  resend = new Resend(team.key, { baseUrl: p.url } as never);
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

test('send, get, list, batch, reschedule and cancel through the SDK', async (t) => {
  const sent = await resend.emails.send(
    { from: `Acme <hi@${team.domain}>`, to: ['ann@inbox-one.test'], subject: 'Hello', html: '<p>Hi</p>' },
    { idempotencyKey: 'sdk-1' },
  );
  t.is(sent.error, null, JSON.stringify(sent.error));
  const id = sent.data!.id;
  const again = await resend.emails.send(
    { from: `Acme <hi@${team.domain}>`, to: ['ann@inbox-one.test'], subject: 'Hello', html: '<p>Hi</p>' },
    { idempotencyKey: 'sdk-1' },
  );
  t.is(again.data?.id, id);

  const got = await resend.emails.get(id);
  t.is(got.error, null);
  t.like(got.data, { id, subject: 'Hello', last_event: 'sent', to: ['ann@inbox-one.test'] });
  // An id that is not a UUID, as Resend answers it; a well-formed unknown one is not found.
  t.like((await resend.emails.get('not-an-id')).error, {
    name: 'invalid_parameter',
    statusCode: 422,
    message: 'The `email_id` in the path must be a valid UUID.',
  });
  t.like((await resend.emails.get(newId())).error, { name: 'not_found', statusCode: 404 });

  const batch = await resend.batch.send([
    { from: `hi@${team.domain}`, to: ['b1@inbox-one.test'], subject: 'B1', text: 'one' },
    { from: `hi@${team.domain}`, to: ['b2@inbox-one.test'], subject: 'B2', text: 'two' },
  ]);
  t.is(batch.error, null, JSON.stringify(batch.error));
  t.is(batch.data?.data.length, 2);

  const list = await resend.emails.list();
  t.is(list.error, null);
  t.true(list.data!.data.some((e: { id: string }) => e.id === id));

  const scheduled = await resend.emails.send({
    from: `hi@${team.domain}`,
    to: ['s@inbox-one.test'],
    subject: 'Later',
    text: 'x',
    scheduledAt: 'in 1 hour',
  });
  t.is(scheduled.error, null, JSON.stringify(scheduled.error));
  const moved = await resend.emails.update({ id: scheduled.data!.id, scheduledAt: 'tomorrow at 10:30am' });
  t.is(moved.error, null, JSON.stringify(moved.error));
  t.is(new Date((await resend.emails.get(scheduled.data!.id)).data!.scheduled_at!).getUTCHours(), 10);
  const canceled = await resend.emails.cancel(scheduled.data!.id);
  t.is(canceled.error, null, JSON.stringify(canceled.error));
  t.is((await resend.emails.get(scheduled.data!.id)).data?.last_event, 'canceled');
});

test('a send under a topic through the SDK (topicId), in a batch too', async (t) => {
  const topic = await resend.topics.create({ name: 'SDK news', defaultSubscription: 'opt_in' });
  t.is(topic.error, null, JSON.stringify(topic.error));
  const topicId = topic.data!.id;
  const sent = await resend.emails.send({
    from: `hi@${team.domain}`,
    to: ['t@inbox-one.test'],
    subject: 'News',
    text: 'x',
    topicId,
  });
  t.is(sent.error, null, JSON.stringify(sent.error));
  t.is((await resend.emails.get(sent.data!.id)).data?.topic_id, topicId);
  const batch = await resend.batch.send([
    { from: `hi@${team.domain}`, to: ['t2@inbox-one.test'], subject: 'News 2', text: 'x', topicId },
  ]);
  t.is(batch.error, null, JSON.stringify(batch.error));
  t.is((await resend.emails.get(batch.data!.data[0].id)).data?.topic_id, topicId);
  const unknown = await resend.emails.send({
    from: `hi@${team.domain}`,
    to: ['t@inbox-one.test'],
    subject: 'News',
    text: 'x',
    topicId: '0190f3b2-0000-7000-8000-000000000001',
  });
  t.like(unknown.error, { statusCode: 422, name: 'validation_error' });
});

test('errors come back in the shape the SDK expects', async (t) => {
  const res = await resend.emails.send({
    from: 'hi@unverified-domain.test',
    to: ['ann@inbox-one.test'],
    subject: 'x',
    text: 'x',
  });
  t.is(res.data, null);
  t.like(res.error, { name: 'validation_error', statusCode: 403 });
  const missing = await resend.emails.get('01a20175-0000-7000-8000-0000000000ff');
  t.like(missing.error, { name: 'not_found', statusCode: 404 });
  const keys = await resend.apiKeys.list();
  t.is(keys.error, null);
  const domains = await resend.domains.list();
  t.is(domains.error, null);
  t.true(domains.data!.data.some((d: { name: string }) => d.name === team.domain));
});
