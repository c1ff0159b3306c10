// Sends under a topic, end to end: POST /emails with topic_id → the MTA delivers one copy per recipient, each with
// a one-click List-Unsubscribe (RFC 8058) naming that recipient, DKIM-signed → the link's POST opts the address out
// of the topic → the next send under that topic skips it (email.suppressed), other mail still reaches it.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';
import { releaseDue } from '../shared/emails/store.ts';
import type { TestTeam } from './helpers/platform.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

async function senderTeam(domainName: string): Promise<{ team: TestTeam; from: string }> {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const domain = await w.sendingDomain(team, domainName);
  return { team, from: `News <news@${domain.name}>` };
}

async function createTopic(team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const res = await w.p.request('POST', '/topics', { key: team.key, body });
  if (res.status !== 201) throw new Error(`POST /topics: ${res.status} ${res.text}`);
  return res.body.id;
}

async function send(team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const res = await w.p.request('POST', '/emails', { key: team.key, body });
  if (res.status !== 200) throw new Error(`POST /emails: ${res.status} ${res.text}`);
  await processDelivery(w.deps, res.body.id);
  return res.body.id;
}

const unfold = (raw: Buffer) => raw.toString().replace(/\r\n[ \t]+/g, ' ');
const unsubscribeUrl = (raw: Buffer) => /^List-Unsubscribe: <([^>]+)>/m.exec(unfold(raw))?.[1];
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

/** What a mailbox provider's one-click sends (RFC 8058 §3.2): a form POST, here without even a User-Agent. */
const oneClick = (token: string) =>
  w.p.request('POST', `/unsubscribe/${token}`, {
    rawBody: 'List-Unsubscribe=One-Click',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    userAgent: null,
  });

test('a topic send: one copy per recipient with its own signed one-click link; unsubscribing skips the address under that topic only', async (t) => {
  const { team, from } = await senderTeam('topic-news.test');
  w.mx('topic-inbox.test');
  w.mx('topic-other.test');
  const topic = await createTopic(team, { name: 'Product news', default_subscription: 'opt_in' });
  const other = await createTopic(team, { name: 'Events', default_subscription: 'opt_in' });

  const id = await send(team, {
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
  const res = await oneClick(tokenOf(urls.get('bob@topic-inbox.test')!));
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(res.text, /no longer receives “Product news” emails/);
  t.like(await w.p.db('topic_subscriptions').where({ topic_id: topic }).first(), {
    email: 'bob@topic-inbox.test',
    subscription: 'opt_out',
    source_email_id: id,
    team_id: team.id,
  });
  t.is((await oneClick(tokenOf(urls.get('bob@topic-inbox.test')!))).status, 200, 'a second post is harmless');
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
  const next = await send(team, {
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

  await send(team, { from, to: 'bob@topic-inbox.test', subject: 'Your receipt', text: 'Thanks' });
  await send(team, { from, to: 'bob@topic-inbox.test', subject: 'Meetup', text: 'Come along', topic_id: other });
  t.is(
    w.sink.deliveredTo('bob@topic-inbox.test').filter((m) => /Subject: (Your receipt|Meetup)/.test(m.raw.toString()))
      .length,
    2,
  );
});

test('an opt_out topic reaches nobody who has not opted in: the email is accepted and every recipient suppressed', async (t) => {
  const { team, from } = await senderTeam('topic-optin.test');
  const topic = await createTopic(team, { name: 'Beta programme', default_subscription: 'opt_out' });
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
  await send(team, { from, to: ['DEE@topic-inbox.test'], subject: 'Beta again', text: 'x', topic_id: topic });
  t.is(w.sink.deliveredTo('DEE@topic-inbox.test').length, 1);
});

test("topic_id must name a topic of the team: another team's, an unknown or a malformed id is 422 and nothing is stored", async (t) => {
  const { team, from } = await senderTeam('topic-checks.test');
  const { team: stranger } = await senderTeam('topic-stranger.test');
  const theirs = await createTopic(stranger, { name: 'Theirs', default_subscription: 'opt_in' });
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

test("the unsubscribe page: GET shows and changes nothing; a forged link is 404; a deleted topic's link suppresses the address", async (t) => {
  const { team, from } = await senderTeam('topic-page.test');
  w.mx('topic-page-inbox.test');
  const topic = await createTopic(team, { name: 'Tips <b>&</b> tricks', default_subscription: 'opt_in' });
  const id = await send(team, { from, to: 'eve@topic-page-inbox.test', subject: 'Tip 1', text: 'x', topic_id: topic });
  const [copy] = w.sink.deliveredTo('eve@topic-page-inbox.test');
  const token = tokenOf(unsubscribeUrl(copy.raw)!);

  const shown = await w.p.request('GET', `/unsubscribe/${token}`);
  t.is(shown.status, 200);
  t.regex(shown.text, /Stop sending “Tips &#60;b&#62;&#38;&#60;\/b&#62; tricks” emails/, 'the name is escaped');
  t.regex(shown.text, /<form method="post">/);
  t.regex(shown.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  t.is(
    (await w.p.db('topic_subscriptions').where({ topic_id: topic })).length,
    0,
    'opening the page unsubscribes nobody',
  );

  const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`;
  for (const bad of [forged, 'short', `${token}x`]) {
    // A browser is shown a page; another client gets the Error shape.
    const page = await w.p.request('POST', `/unsubscribe/${bad}`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    t.is(page.status, 404, bad);
    t.regex(page.text, /This unsubscribe link is not valid/);
    const error = await w.p.request('GET', `/unsubscribe/${bad}`);
    t.like(error.body, { statusCode: 404, name: 'not_found', message: 'Unsubscribe link not found.' });
  }

  t.is((await w.p.request('DELETE', `/topics/${topic}`, { key: team.key })).status, 200);
  const res = await oneClick(token);
  t.is(res.status, 200);
  t.like(await w.p.db('suppressions').where({ team_id: team.id }).first(), {
    email: 'eve@topic-page-inbox.test',
    origin: 'unsubscribe',
    source_id: id,
  });
  t.regex((await w.p.request('GET', `/unsubscribe/${token}`)).text, /You are unsubscribed/);
});

test("the preference page lists the team's public topics and the email's own; saving opts each in or out", async (t) => {
  const { team, from } = await senderTeam('topic-prefs.test');
  w.mx('topic-prefs-inbox.test');
  const own = await createTopic(team, { name: 'Weekly digest', default_subscription: 'opt_in' });
  const launches = await createTopic(team, {
    name: 'Launches',
    default_subscription: 'opt_out',
    visibility: 'public',
    description: 'New products, <once> a month',
  });
  const hidden = await createTopic(team, {
    name: 'Internal beta',
    default_subscription: 'opt_in',
    visibility: 'private',
  });
  const { team: stranger } = await senderTeam('topic-prefs-stranger.test');
  await createTopic(stranger, { name: 'Stranger news', default_subscription: 'opt_in', visibility: 'public' });
  await send(team, { from, to: 'fay@topic-prefs-inbox.test', subject: 'Digest', text: 'x', topic_id: own });
  const token = tokenOf(unsubscribeUrl(w.sink.deliveredTo('fay@topic-prefs-inbox.test')[0].raw)!);

  const shown = await w.p.request('GET', `/unsubscribe/${token}`);
  // Relative to the page (/unsubscribe/<token>), so a proxy's path prefix is kept.
  t.regex(shown.text, new RegExp(`<form method="post" action="${token}/preferences">`));
  t.regex(shown.text, new RegExp(`value="${own}" checked> Weekly digest`), 'its own topic, opt_in by default');
  t.regex(
    shown.text,
    new RegExp(`value="${launches}"> Launches</label><br><small>New products, &#60;once&#62; a month`),
    'a public topic, opt_out by default',
  );
  t.notRegex(shown.text, new RegExp(hidden), 'another private topic is not shown');
  t.notRegex(shown.text, /Stranger news/, "nor another team's");

  // Untick the digest, tick Launches, and try to slip in the private topic: only listed topics change.
  // Where a browser posts the form: its action resolved against the page's address.
  const formPath = new URL(
    /<form method="post" action="([^"]+)">/.exec(shown.text)![1],
    `http://mail.test/unsubscribe/${token}`,
  ).pathname;
  t.is(formPath, `/unsubscribe/${token}/preferences`);
  const saved = await w.p.request('POST', formPath, {
    rawBody: new URLSearchParams([
      ['topic', launches],
      ['topic', hidden],
    ]).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(saved.status, 200);
  t.regex(saved.text, /Preferences saved/);
  t.regex(
    saved.text,
    /<form method="post" action="preferences">/,
    'the form posts to the same place again (relative to .../preferences)',
  );
  const rows = await w.p.db('topic_subscriptions').where({ team_id: team.id }).orderBy('topic_id');
  t.deepEqual(
    rows.map((r) => [r.topic_id, r.email, r.subscription]).sort(),
    [
      [own, 'fay@topic-prefs-inbox.test', 'opt_out'],
      [launches, 'fay@topic-prefs-inbox.test', 'opt_in'],
    ].sort(),
  );
  t.regex((await w.p.request('GET', `/unsubscribe/${token}`)).text, /You are unsubscribed/);

  // The choices decide the next sends.
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from, to: 'fay@topic-prefs-inbox.test', subject: 'Launch', text: 'x', topic_id: launches },
  });
  t.like(await w.p.db('email_recipients').where({ email_id: sent.body.id }).first(), { status: 'queued' });
  const skipped = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from, to: 'fay@topic-prefs-inbox.test', subject: 'Digest 2', text: 'x', topic_id: own },
  });
  t.like(await w.p.db('email_recipients').where({ email_id: skipped.body.id }).first(), { status: 'suppressed' });
});

test('the topic is checked again at delivery: who opted out after a scheduled send was accepted is suppressed, not sent to', async (t) => {
  const { team, from } = await senderTeam('topic-later.test');
  w.mx('topic-later-inbox.test');
  const topic = await createTopic(team, { name: 'Monthly', default_subscription: 'opt_in' });
  await send(team, { from, to: 'gus@topic-later-inbox.test', subject: 'May', text: 'x', topic_id: topic });
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
  t.is((await oneClick(token)).status, 200);
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
});

test('a topic deleted before delivery reaches nobody more: its opt-outs went with it', async (t) => {
  const { team, from } = await senderTeam('topic-gone.test');
  w.mx('topic-gone-inbox.test');
  const topic = await createTopic(team, { name: 'Gone', default_subscription: 'opt_in' });
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
  const { team, from } = await senderTeam('topic-retry.test');
  w.mx('topic-retry-inbox.test');
  const topic = await createTopic(team, { name: 'Retries', default_subscription: 'opt_in' });
  w.sink.script('ivy@topic-retry-inbox.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const id = await send(team, {
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
