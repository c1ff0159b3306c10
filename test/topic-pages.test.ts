// The pages a topic send's link opens: the one-click unsubscribe page (RFC 8058) and the preference page, on
// copies the MTA delivered to the loopback sink.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { createTopic, oneClick, send, senderTeam, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

test("the unsubscribe page: GET shows and changes nothing; a forged link is 404; a deleted topic's link suppresses the address", async (t) => {
  const { team, from } = await senderTeam(w, 'topic-page.test');
  w.mx('topic-page-inbox.test');
  const topic = await createTopic(w, team, { name: 'Tips <b>&</b> tricks', default_subscription: 'opt_in' });
  const id = await send(w, team, {
    from,
    to: 'eve@topic-page-inbox.test',
    subject: 'Tip 1',
    text: 'x',
    topic_id: topic,
  });
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
  const res = await oneClick(w, token);
  t.is(res.status, 200);
  t.like(await w.p.db('suppressions').where({ team_id: team.id }).first(), {
    email: 'eve@topic-page-inbox.test',
    origin: 'unsubscribe',
    source_id: id,
  });
  t.regex((await w.p.request('GET', `/unsubscribe/${token}`)).text, /You are unsubscribed/);
});

test("the preference page lists the team's public topics and the email's own; saving opts each in or out", async (t) => {
  const { team, from } = await senderTeam(w, 'topic-prefs.test');
  w.mx('topic-prefs-inbox.test');
  const own = await createTopic(w, team, { name: 'Weekly digest', default_subscription: 'opt_in' });
  const launches = await createTopic(w, team, {
    name: 'Launches',
    default_subscription: 'opt_out',
    visibility: 'public',
    description: 'New products, <once> a month',
  });
  const hidden = await createTopic(w, team, {
    name: 'Internal beta',
    default_subscription: 'opt_in',
    visibility: 'private',
  });
  const { team: stranger } = await senderTeam(w, 'topic-prefs-stranger.test');
  await createTopic(w, stranger, { name: 'Stranger news', default_subscription: 'opt_in', visibility: 'public' });
  await send(w, team, { from, to: 'fay@topic-prefs-inbox.test', subject: 'Digest', text: 'x', topic_id: own });
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
