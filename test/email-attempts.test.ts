// A sent email's delivery attempts through the API (GET /emails/{id}/attempts[/{attempt_id}]): sent with
// POST /emails, delivered by the mta's deliver job to a scripted SMTP peer found through the loopback DNS, and
// read back with each attempt's SMTP transcript; lists newest first with cursors; nothing of another team's.
import test from 'ava';
import { apiSender, startMtaWorld, type ApiAttempt, type MtaWorld } from './helpers/mta.ts';
import { processDelivery } from '../mta/delivery/job.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const MIN = 60_000;

test('each attempt is readable with its SMTP transcript: a 450 deferral, then the delivery', async (t) => {
  const { team, domain, send } = await apiSender(w, 'attempts-sender.test');
  w.mx('attempts-inbox.test');
  const secret = `body-marker-${Math.random().toString(36).slice(2)}`;
  const id = await send({ to: 'sam@attempts-inbox.test', subject: 'Attempts', text: `Hello, ${secret}` });

  const empty = await w.p.request('GET', `/emails/${id}/attempts`, { key: team.key });
  t.is(empty.status, 200, empty.text);
  t.deepEqual(empty.body, { object: 'list', has_more: false, data: [] }, 'no attempt before the mta tried');

  w.sink.script('sam@attempts-inbox.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const t0 = new Date();
  await processDelivery(w.deps, id, t0);
  w.sink.script('sam@attempts-inbox.test', {});
  await processDelivery(w.deps, id, new Date(t0.getTime() + MIN));
  t.is(w.sink.deliveredTo('sam@attempts-inbox.test').length, 1);

  const list = await w.p.request('GET', `/emails/${id}/attempts`, { key: team.key });
  t.is(list.status, 200, list.text);
  t.false(list.body.has_more);
  const [delivered, deferred] = list.body.data as ApiAttempt[];
  t.deepEqual(
    list.body.data.map((a: ApiAttempt) => a.outcome),
    ['delivered', 'deferred'],
    'newest first',
  );
  for (const a of [delivered, deferred]) {
    t.like(a, {
      object: 'delivery_attempt',
      email_id: id,
      domain: 'attempts-inbox.test',
      recipients: ['sam@attempts-inbox.test'],
      mx_host: 'mx.attempts-inbox.test',
      tls: true,
    });
    t.true(Number.isInteger(a.duration_ms) && a.duration_ms >= 0);
    t.regex(a.started_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    t.regex(a.transcript!, /^\* (connecting|reusing the session) to mx\.attempts-inbox\.test \[127\.0\.0\.1\]/m);
    t.regex(
      a.transcript!,
      new RegExp(`^C: MAIL FROM:<bounces\\+[^@]+@send\\.${domain.name.replace('.', '\\.')}>`, 'm'),
    );
    t.regex(a.transcript!, /^C: RCPT TO:<sam@attempts-inbox\.test>/m);
    t.false(a.transcript!.includes(secret), 'the transcript never holds the message');
  }
  t.is(deferred.started_at, t0.toISOString());
  t.is(deferred.response, '450 4.2.1 Mailbox busy, try later');
  t.regex(deferred.transcript!, /^S: 450 4\.2\.1 Mailbox busy, try later$/m);
  t.regex(delivered.response!, /^250 /);
  t.regex(delivered.transcript!, /^\* <\d+ bytes encoded mime message/m);

  const one = await w.p.request('GET', `/emails/${id}/attempts/${deferred.id}`, { key: team.key });
  t.is(one.status, 200, one.text);
  t.deepEqual(one.body, deferred);

  // Pages of one: the cursors are attempt ids, as in every list.
  const first = await w.p.request('GET', `/emails/${id}/attempts?limit=1`, { key: team.key });
  t.like(first.body, { has_more: true });
  t.deepEqual(
    first.body.data.map((a: ApiAttempt) => a.id),
    [delivered.id],
  );
  const older = await w.p.request('GET', `/emails/${id}/attempts?limit=1&after=${delivered.id}`, { key: team.key });
  t.like(older.body, { has_more: false });
  t.deepEqual(
    older.body.data.map((a: ApiAttempt) => a.id),
    [deferred.id],
  );
  const newer = await w.p.request('GET', `/emails/${id}/attempts?limit=1&before=${deferred.id}`, { key: team.key });
  t.deepEqual(
    newer.body.data.map((a: ApiAttempt) => a.id),
    [delivered.id],
  );
  const bad = await w.p.request('GET', `/emails/${id}/attempts?limit=0`, { key: team.key });
  t.is(bad.status, 422);
  t.is(bad.body.name, 'validation_error');
});

test('an attempt the DNS settled has no MX host; each recipient domain is its own attempt', async (t) => {
  const { team, send } = await apiSender(w, 'attempts-dns-sender.test');
  w.mx('attempts-ok.test');
  w.mx('attempts-nullmx.test');
  const id = await send({ to: ['ann@attempts-ok.test', 'bob@attempts-nullmx.test'], text: 'two domains' });
  // After acceptance the domain publishes a null MX (RFC 7505): the DNS answer settles it, no connection.
  w.dns.set('attempts-nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
  await processDelivery(w.deps, id);

  const list = await w.p.request('GET', `/emails/${id}/attempts`, { key: team.key });
  t.is(list.status, 200, list.text);
  const byDomain = new Map((list.body.data as ApiAttempt[]).map((a) => [a.domain, a]));
  t.deepEqual([...byDomain.keys()].sort(), ['attempts-nullmx.test', 'attempts-ok.test']);
  t.like(byDomain.get('attempts-ok.test'), {
    outcome: 'delivered',
    mx_host: 'mx.attempts-ok.test',
    recipients: ['ann@attempts-ok.test'],
  });
  const dns = byDomain.get('attempts-nullmx.test')!;
  t.like(dns, { outcome: 'bounced', mx_host: null, tls: false, recipients: ['bob@attempts-nullmx.test'] });
  t.regex(dns.response!, /^550 5\.1\.10 /);
  t.regex(dns.transcript!, /^\* DNS: /);
});

test('nothing of another team, of another email, or for a key that only sends', async (t) => {
  const { team, send } = await apiSender(w, 'attempts-owner.test');
  w.mx('attempts-private.test');
  const id = await send({ to: 'eve@attempts-private.test', text: 'mine' });
  const otherEmail = await send({ to: 'eve@attempts-private.test', text: 'also mine' });
  await processDelivery(w.deps, id);
  const [attempt] = (await w.p.request('GET', `/emails/${id}/attempts`, { key: team.key })).body.data as ApiAttempt[];
  t.truthy(attempt);

  const stranger = await w.p.createTeam();
  for (const path of [`/emails/${id}/attempts`, `/emails/${id}/attempts/${attempt.id}`]) {
    const res = await w.p.request('GET', path, { key: stranger.key });
    t.is(res.status, 404, path);
    t.like(res.body, { statusCode: 404, name: 'not_found', message: 'Email not found.' });
  }
  const elsewhere = await w.p.request('GET', `/emails/${otherEmail}/attempts/${attempt.id}`, { key: team.key });
  t.is(elsewhere.status, 404);
  t.like(elsewhere.body, { name: 'not_found', message: 'Delivery attempt not found.' });
  const malformed = await w.p.request('GET', `/emails/${id}/attempts/not-an-id`, { key: team.key });
  t.like(malformed, { status: 422, body: { name: 'invalid_parameter' } });

  const created = await w.p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'sender only', permission: 'sending_access' },
  });
  t.is(created.status, 201, created.text);
  const restricted = await w.p.request('GET', `/emails/${id}/attempts`, { key: created.body.token });
  t.is(restricted.status, 401);
  t.is(restricted.body.name, 'restricted_api_key');
});
