// Sends under a topic, end to end: POST /emails with topic_id → the MTA delivers one copy per recipient, each with
// a one-click List-Unsubscribe (RFC 8058) naming that recipient, DKIM-signed → the link's POST opts the address out
// of the topic → the next send under that topic skips it (email.suppressed), other mail still reaches it.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { createTopic, oneClick, send, senderTeam, tokenOf, unfold, unsubscribeUrl } from './helpers/topic-sends.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';
import { releaseDue } from '../shared/emails/store.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

test('a topic send: one copy per recipient with its own signed one-click link; unsubscribing skips the address under that topic only', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-news.test');
  w.mx('topic-inbox.test');
  w.mx('topic-other.test');
  const topic = await createTopic(w, team, { name: 'Product news', default_subscription: 'opt_in' });
  const other = await createTopic(w, team, { name: 'Events', default_subscription: 'opt_in' });

  const id = await send(w, team, {
    from,
    to: ['ann@topic-inbox.test', 'bob@topic-inbox.test'],
    cc: 'cy@topic-other.test',
    subject: 'June news',
    html: '<p>News</p>',
    topic_id: topic,
  });
  t.is((await w.p.request('GET', `/emails/${id}`, { key: team.key })).body.topic_id, topic);
  const recipients = await w.p.db('email_recipients').where({ email_id: id });
  const urls = new Map<string, string>();
  for (const address of ['ann@topic-inbox.test', 'bob@topic-inbox.test', 'cy@topic-other.test']) {
    const copies = w.sink.deliveredTo(address).filter((m) => m.raw.toString().includes('Subject: June news'));
    t.is(copies.length, 1, address);
    const [copy] = copies;
    t.deepEqual(copy.to, [address], 'a transaction of its own: the link names one recipient');
    const url = unsubscribeUrl(copy.raw) ?? '';
    t.true(url.startsWith(`${w.p.config.PUBLIC_BASE_URL}/unsubscribe/`), url);
    t.is(readUnsubscribeToken(w.deps.secrets, tokenOf(url)), recipients.find((r) => r.address === address)!.id);
    t.regex(copy.raw.toString(), /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    const signed = (/^DKIM-Signature:.*?\bh=([^;]+)/m.exec(unfold(copy.raw))?.[1] ?? '')
      .split(':')
      .map((h) => h.trim().toLowerCase());
    t.true(signed.includes('list-unsubscribe') && signed.includes('list-unsubscribe-post'), signed.join(':'));
    t.deepEqual(
      (await w.verifyDkim(copy.raw)).map((d) => d.status),
      ['pass'],
      address,
    );
    t.regex(
      unfold(copy.raw),
      /^To: ann@topic-inbox\.test, bob@topic-inbox\.test\r$/m,
      'the headers still show every visible recipient',
    );
    urls.set(address, url);
  }
  t.is(new Set(urls.values()).size, 3);
  const stored = await w.p.db('emails').where({ id }).first();
  t.is(stored.last_event, 'delivered');

  // Bob's mailbox provider posts the one-click: bob is opted out of this topic, nobody else.
  const res = await oneClick(w, tokenOf(urls.get('bob@topic-inbox.test')!));
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  // A private topic (the default visibility) is never named on the page.
  t.regex(res.text, /bob@topic-inbox\.test no longer receives emails like this one from News\./);
  t.notRegex(res.text, /Product news/);
  t.like(await w.p.db('topic_subscriptions').where({ topic_id: topic }).first(), {
    email: 'bob@topic-inbox.test',
    subscription: 'opt_out',
    source_email_id: id,
    team_id: team.id,
  });
  t.is((await oneClick(w, tokenOf(urls.get('bob@topic-inbox.test')!))).status, 200, 'a second post is harmless');
  t.is(
    await w.p
      .db('topic_subscriptions')
      .count({ n: '*' })
      .where({ topic_id: topic })
      .first()
      .then((r) => Number(r?.n)),
    1,
  );
  t.is(
    await w.p.db('suppressions').where({ team_id: team.id }).first(),
    undefined,
    'a topic unsubscribe is not a suppression',
  );

  // The next send under the topic skips bob; other mail still reaches him.
  const next = await send(w, team, {
    from,
    to: ['ann@topic-inbox.test', 'Bob@topic-inbox.test'],
    subject: 'July news',
    html: '<p>News</p>',
    topic_id: topic,
  });
  const skipped = await w.p.db('email_recipients').where({ email_id: next, address: 'Bob@topic-inbox.test' }).first();
  t.is(skipped.status, 'suppressed');
  t.regex(skipped.last_response, /not subscribed to the topic Product news/);
  t.is(w.sink.deliveredTo('bob@topic-inbox.test').filter((m) => m.raw.toString().includes('July news')).length, 0);
  t.is(w.sink.deliveredTo('ann@topic-inbox.test').filter((m) => m.raw.toString().includes('July news')).length, 1);
  const suppressed = await w.p.db('events').where({ team_id: team.id, type: 'email.suppressed' });
  t.is(suppressed.length, 1);
  t.like(suppressed[0].data, {
    email_id: next,
    to: ['Bob@topic-inbox.test'],
    suppressed: { type: 'Suppressed', reason: 'unsubscribed_from_topic', topic_id: topic },
  });

  await send(w, team, { from, to: 'bob@topic-inbox.test', subject: 'Your receipt', text: 'Thanks' });
  await send(w, team, { from, to: 'bob@topic-inbox.test', subject: 'Meetup', text: 'Come along', topic_id: other });
  t.is(
    w.sink.deliveredTo('bob@topic-inbox.test').filter((m) => /Subject: (Your receipt|Meetup)/.test(m.raw.toString()))
      .length,
    2,
  );
});

test('an opt_out topic reaches nobody who has not opted in: the email is accepted and every recipient suppressed', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-optin.test');
  const topic = await createTopic(w, team, { name: 'Beta programme', default_subscription: 'opt_out' });
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from, to: ['dee@topic-inbox.test'], subject: 'Beta', text: 'x', topic_id: topic },
  });
  t.is(res.status, 200, res.text);
  const email = await w.p.db('emails').where({ id: res.body.id }).first();
  t.like(email, { status: 'done', last_event: 'suppressed', topic_id: topic });
  // Once the address opts in (the contacts area's topic choices write the same rows), it is sent to.
  await w.p
    .db('topic_subscriptions')
    .insert({ topic_id: topic, team_id: team.id, email: 'dee@topic-inbox.test', subscription: 'opt_in' });
  w.mx('topic-inbox.test');
  await send(w, team, { from, to: ['DEE@topic-inbox.test'], subject: 'Beta again', text: 'x', topic_id: topic });
  t.is(w.sink.deliveredTo('DEE@topic-inbox.test').length, 1);
});

test("topic_id must name a topic of the team: another team's, an unknown or a malformed id is 422 and nothing is stored", async (t) => {
  const { team, from } = await senderTeam(w, 'topic-checks.test');
  const { team: stranger } = await senderTeam(w, 'topic-stranger.test');
  const theirs = await createTopic(w, stranger, { name: 'Theirs', default_subscription: 'opt_in' });
  for (const topicId of [theirs, '0190f3b2-0000-7000-8000-000000000001', 'not-a-uuid']) {
    const res = await w.p.request('POST', '/emails', {
      key: team.key,
      body: { from, to: 'x@topic-inbox.test', subject: 'x', text: 'x', topic_id: topicId },
    });
    t.is(res.status, 422, topicId);
    t.like(res.body, { name: 'validation_error', errors: [{ path: 'topic_id', message: 'not found' }] });
  }
  t.is((await w.p.db('emails').where({ team_id: team.id })).length, 0);
});

// Serial, as the next: each releases every scheduled email due by its time (releaseDue), the other's included.
test.serial(
  'the topic is checked again at delivery: who opted out after a scheduled send was accepted is suppressed, not sent to',
  async (t) => {
    const { team, from } = await senderTeam(w, 'topic-later.test');
    w.mx('topic-later-inbox.test');
    const topic = await createTopic(w, team, { name: 'Monthly', default_subscription: 'opt_in' });
    await send(w, team, { from, to: 'gus@topic-later-inbox.test', subject: 'May', text: 'x', topic_id: topic });
    const token = tokenOf(unsubscribeUrl(w.sink.deliveredTo('gus@topic-later-inbox.test')[0].raw)!);

    const res = await w.p.request('POST', '/emails', {
      key: team.key,
      body: {
        from,
        to: ['gus@topic-later-inbox.test', 'hal@topic-later-inbox.test'],
        subject: 'June',
        text: 'x',
        topic_id: topic,
        scheduled_at: 'in 1 hour',
      },
    });
    t.is(res.status, 200, res.text);
    t.is((await oneClick(w, token)).status, 200);
    const later = new Date(Date.now() + 2 * 3600_000);
    t.deepEqual(await releaseDue(w.p.db, later), [res.body.id]);
    await processDelivery(w.deps, res.body.id, later);

    t.is(
      w.sink.deliveredTo('gus@topic-later-inbox.test').filter((m) => m.raw.toString().includes('Subject: June')).length,
      0,
    );
    t.is(
      w.sink.deliveredTo('hal@topic-later-inbox.test').filter((m) => m.raw.toString().includes('Subject: June')).length,
      1,
    );
    const rows = await w.p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
    t.deepEqual(
      rows.map((r) => [r.address, r.status]),
      [
        ['gus@topic-later-inbox.test', 'suppressed'],
        ['hal@topic-later-inbox.test', 'delivered'],
      ],
    );
    const [event] = await w.p.db('events').where({ team_id: team.id, type: 'email.suppressed' });
    t.like(event.data, {
      email_id: res.body.id,
      to: ['gus@topic-later-inbox.test'],
      suppressed: { type: 'Suppressed', reason: 'unsubscribed_from_topic', topic_id: topic },
    });
    const attempts = await w.p.db('delivery_attempts').where({ email_id: res.body.id });
    t.deepEqual(
      attempts.map((a) => a.recipients),
      [['hal@topic-later-inbox.test']],
      'no attempt for the suppressed one',
    );
    t.is((await w.p.db('emails').where({ id: res.body.id }).first()).status, 'done');
  },
);

test.serial('a topic deleted before delivery reaches nobody more: its opt-outs went with it', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-gone.test');
  w.mx('topic-gone-inbox.test');
  const topic = await createTopic(w, team, { name: 'Gone', default_subscription: 'opt_in' });
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from,
      to: ['ivy@topic-gone-inbox.test', 'jon@topic-gone-inbox.test'],
      subject: 'Later',
      text: 'x',
      topic_id: topic,
      scheduled_at: 'in 1 hour',
    },
  });
  t.is(res.status, 200, res.text);
  t.is((await w.p.request('DELETE', `/topics/${topic}`, { key: team.key })).status, 200);
  const later = new Date(Date.now() + 2 * 3600_000);
  t.deepEqual(await releaseDue(w.p.db, later), [res.body.id]);
  await processDelivery(w.deps, res.body.id, later);

  t.is(
    w.sink.deliveredTo('ivy@topic-gone-inbox.test').length + w.sink.deliveredTo('jon@topic-gone-inbox.test').length,
    0,
  );
  const rows = await w.p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => [r.address, r.status, r.last_response]),
    [
      ['ivy@topic-gone-inbox.test', 'suppressed', "the send's topic was deleted"],
      ['jon@topic-gone-inbox.test', 'suppressed', "the send's topic was deleted"],
    ],
  );
  const events = await w.p.db('events').where({ team_id: team.id, type: 'email.suppressed' });
  t.is(events.length, 2);
  for (const e of events)
    t.like(e.data, {
      email_id: res.body.id,
      suppressed: { type: 'Suppressed', reason: 'topic_deleted', topic_id: topic },
    });
  t.is((await w.p.db('delivery_attempts').where({ email_id: res.body.id })).length, 0);
  t.is((await w.p.db('emails').where({ id: res.body.id }).first()).status, 'done');
});

test('a deferred topic recipient: the stored message has no List-Unsubscribe; the retry adds the same link, signed again', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-retry.test');
  w.mx('topic-retry-inbox.test');
  const topic = await createTopic(w, team, { name: 'Retries', default_subscription: 'opt_in' });
  w.sink.script('ivy@topic-retry-inbox.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const id = await send(w, team, {
    from,
    to: ['ivy@topic-retry-inbox.test', 'jon@topic-retry-inbox.test'],
    subject: 'Retry me',
    html: '<p>x</p>',
    topic_id: topic,
  });
  const [first] = w.sink.deliveredTo('jon@topic-retry-inbox.test');
  t.truthy(first, 'the other recipient is not held back');
  const email = await w.p.db('emails').where({ id }).first();
  t.truthy(email.raw_blob_key, 'stored for the retry');
  t.false(
    /^List-Unsubscribe/im.test((await w.p.deps.blobs.get(email.raw_blob_key))!.toString()),
    'the stored message names no recipient',
  );

  w.sink.script('ivy@topic-retry-inbox.test', {});
  const ivy = await w.p.db('email_recipients').where({ email_id: id, address: 'ivy@topic-retry-inbox.test' }).first();
  await processDelivery(w.deps, id, new Date(ivy.next_attempt_at.getTime() + 1000));
  const [retried] = w.sink.deliveredTo('ivy@topic-retry-inbox.test');
  t.is(readUnsubscribeToken(w.deps.secrets, tokenOf(unsubscribeUrl(retried.raw)!)), ivy.id);
  t.deepEqual(
    (await w.verifyDkim(retried.raw)).map((d) => d.status),
    ['pass'],
  );
  t.is(
    retried.raw.toString().split('\r\n\r\n').slice(1).join('\r\n\r\n'),
    first.raw.toString().split('\r\n\r\n').slice(1).join('\r\n\r\n'),
    'the same body',
  );
});
