// The page a topic send's link opens, over HTTP (test/preference-page.test.ts drives it in a browser): the one-click
// unsubscribe (RFC 8058), the preference form and unsubscribe from everything, on copies the MTA delivered to the
// loopback sink; what they write is what the contacts API shows.
import test from 'ava';
import { createHash } from 'node:crypto';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { createTopic, oneClick, send, senderTeam, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { contactEvents } from './helpers/contacts.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const form = (fields: [string, string][]) => ({
  rawBody: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** Where a browser posts the page's form whose action ends in `suffix`: its action resolved against `pagePath`. */
function formPath(html: string, pagePath: string, suffix: RegExp): string {
  const actions = [...html.matchAll(/<form method="post" action="([^"]+)">/g)].map((m) => m[1]);
  const action = actions.find((a) => suffix.test(a));
  if (!action) throw new Error(`no form posting to ${suffix} in ${actions.join(', ')}`);
  return new URL(action, `http://mail.test${pagePath}`).pathname;
}

test('GET changes nothing; a strict CSP with no script; a bad link is one 404; a deleted topic’s link unsubscribes from everything', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-page.test');
  w.mx('topic-page-inbox.test');
  const topic = await createTopic(w, team, {
    name: 'Tips <b>&</b> tricks',
    default_subscription: 'opt_in',
    visibility: 'public',
  });
  await send(w, team, { from, to: 'eve@topic-page-inbox.test', subject: 'Tip 1', text: 'x', topic_id: topic });
  const token = tokenOf(unsubscribeUrl(w.sink.deliveredTo('eve@topic-page-inbox.test')[0].raw)!);

  const shown = await w.p.request('GET', `/unsubscribe/${token}`);
  t.is(shown.status, 200);
  t.regex(shown.text, /subscribed to “Tips &#60;b&#62;&#38;&#60;\/b&#62; tricks”/, 'the name is escaped');
  t.regex(shown.text, new RegExp(`<form method="post" action="${token}">`));
  t.notRegex(shown.text, /<script|\son[a-z]+=|javascript:/i, 'no script of any kind');
  const csp = shown.headers.get('content-security-policy') ?? '';
  t.notRegex(csp, /unsafe/);
  const style = /<style>([\s\S]*?)<\/style>/.exec(shown.text)![1];
  t.is(
    csp,
    `default-src 'none'; style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  t.is(shown.headers.get('referrer-policy'), 'no-referrer', 'the token never leaves in a Referer');
  t.is(shown.headers.get('cache-control'), 'no-store');
  t.is((await w.p.db('topic_subscriptions').where({ topic_id: topic })).length, 0, 'opening the page changes nothing');
  t.is((await w.p.db('contacts').where({ team_id: team.id })).length, 0);

  const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`;
  for (const bad of [forged, 'short', `${token}x`]) {
    for (const path of [`/unsubscribe/${bad}`, `/unsubscribe/${bad}/preferences`, `/unsubscribe/${bad}/all`]) {
      // A browser is shown a page; another client gets the Error shape.
      const page = await w.p.request('POST', path, {
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      t.is(page.status, 404, path);
      t.regex(page.text, /This link does not work/);
      t.regex(page.headers.get('content-security-policy') ?? '', /^default-src 'none'/);
      const error = await w.p.request('GET', path.replace(/\/(preferences|all)$/, ''));
      t.like(error.body, { statusCode: 404, name: 'not_found', message: 'Unsubscribe link not found.' });
    }
  }
  t.is((await w.p.db('contacts').where({ team_id: team.id })).length, 0, 'a bad link changed nothing');

  // The topic is gone: its one-click unsubscribes the address from everything, making the contact it had not.
  t.is((await w.p.request('DELETE', `/topics/${topic}`, { key: team.key })).status, 200);
  const res = await oneClick(w, token);
  t.is(res.status, 200);
  t.regex(res.text, /<p class="callout" role="status">You are unsubscribed from everything from News\.<\/p>/);
  const contact = await w.p.request('GET', '/contacts/eve@topic-page-inbox.test', { key: team.key });
  t.like(contact.body, { email: 'eve@topic-page-inbox.test', unsubscribed: true });
  t.is(await w.p.db('suppressions').where({ team_id: team.id }).first(), undefined, 'not a suppression');
  t.is((await oneClick(w, token)).status, 200, 'again: harmless');
  t.deepEqual(
    (await contactEvents(w.p, team.id)).map((e) => [e.type, e.data.unsubscribed, e.data.segment_ids]),
    [['contact.created', true, []]],
  );
});

test("the preference form: the team's public topics only; saving opts each in or out and ignores other ids", async (t) => {
  const { team, from } = await senderTeam(w, 'topic-prefs.test');
  w.mx('topic-prefs-inbox.test');
  const own = await createTopic(w, team, {
    name: 'Weekly digest',
    default_subscription: 'opt_in',
    visibility: 'public',
  });
  const launches = await createTopic(w, team, {
    name: 'Launches',
    default_subscription: 'opt_out',
    visibility: 'public',
    description: 'New products, <once> a month',
  });
  const hidden = await createTopic(w, team, { name: 'Internal beta', default_subscription: 'opt_in' });
  const { team: stranger } = await senderTeam(w, 'topic-prefs-stranger.test');
  const theirs = await createTopic(w, stranger, {
    name: 'Stranger news',
    default_subscription: 'opt_in',
    visibility: 'public',
  });
  await send(w, team, { from, to: 'fay@topic-prefs-inbox.test', subject: 'Digest', text: 'x', topic_id: own });
  const token = tokenOf(unsubscribeUrl(w.sink.deliveredTo('fay@topic-prefs-inbox.test')[0].raw)!);

  const shown = await w.p.request('GET', `/unsubscribe/${token}`);
  t.regex(shown.text, new RegExp(`<form method="post" action="${token}/preferences">`));
  t.regex(shown.text, new RegExp(`value="${own}" checked><label`), 'a public topic, opt_in by default');
  t.regex(shown.text, new RegExp(`<label for="t-${own}">Weekly digest</label>`), 'each box has its label');
  t.regex(shown.text, new RegExp(`value="${launches}" aria-describedby="d-${launches}"><label`), 'opt_out by default');
  t.regex(shown.text, /New products, &#60;once&#62; a month/);
  t.notRegex(shown.text, new RegExp(`${hidden}|Internal beta`), 'a private topic is not shown');
  t.notRegex(shown.text, /Stranger news/, "nor another team's");

  // Untick the digest, tick Launches, and try to slip in the private topic and another team's.
  const prefs = formPath(shown.text, `/unsubscribe/${token}`, /preferences$/);
  t.is(prefs, `/unsubscribe/${token}/preferences`);
  const saved = await w.p.request(
    'POST',
    prefs,
    form([
      ['topic', launches],
      ['topic', hidden],
      ['topic', theirs],
    ]),
  );
  t.is(saved.status, 200);
  t.regex(saved.text, /<p class="notice" role="status">Your preferences are saved\.<\/p>/);
  // From .../preferences the forms still post to the link and beside it.
  t.is(formPath(saved.text, prefs, /preferences$/), prefs);
  t.is(formPath(saved.text, prefs, /all$/), `/unsubscribe/${token}/all`);
  const rows = await w.p.db('topic_subscriptions').orderBy('topic_id');
  t.deepEqual(
    rows.filter((r) => [own, launches, hidden, theirs].includes(r.topic_id)).map((r) => [r.topic_id, r.subscription]),
    [
      [own, 'opt_out'],
      [launches, 'opt_in'],
    ],
  );
  t.regex(saved.text, /You no longer get “Weekly digest” emails\./);

  // Saving the same choices again writes nothing; the choices decide the next sends.
  await w.p.request('POST', prefs, form([['topic', launches]]));
  t.is((await w.p.db('topic_subscriptions').where({ team_id: team.id })).length, 2);
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

test('unsubscribe from everything, subscribe again: the contact the API shows, one event per change; choices kept', async (t) => {
  const { team, from } = await senderTeam(w, 'topic-all.test');
  w.mx('topic-all-inbox.test');
  const news = await createTopic(w, team, { name: 'News', default_subscription: 'opt_in', visibility: 'public' });
  const address = 'Gil@topic-all-inbox.test';
  const contact = await w.p.request('POST', '/contacts', {
    key: team.key,
    body: { email: 'gil@TOPIC-ALL-INBOX.test' },
  });
  t.is(contact.status, 201);
  await send(w, team, { from, to: address, subject: 'News 1', text: 'x', topic_id: news });
  const token = tokenOf(unsubscribeUrl(w.sink.deliveredTo(address)[0].raw)!);
  const all = `/unsubscribe/${token}/all`;

  // Under /api/v1 too; an empty body unsubscribes, as the form's hidden field does.
  const done = await w.p.request('POST', `/api/v1${all}`, form([]));
  t.is(done.status, 200);
  t.regex(done.text, /role="status">You are unsubscribed from everything/);
  t.is(formPath(done.text, `/api/v1${all}`, /all$/), `/api/v1${all}`);
  t.is(formPath(done.text, `/api/v1${all}`, new RegExp(`${token}$`)), `/api/v1/unsubscribe/${token}`);
  t.regex(done.text, /<button type="submit" class="quiet">Subscribe again<\/button>/);
  t.is((await w.p.request('POST', all, form([['unsubscribed', 'true']]))).status, 200, 'again: no change');
  const shown = await w.p.request('GET', `/contacts/${contact.body.id}`, { key: team.key });
  t.like(shown.body, { email: 'gil@topic-all-inbox.test', unsubscribed: true });

  // Saving choices while unsubscribed keeps them and stays unsubscribed.
  await w.p.request('POST', `/unsubscribe/${token}/preferences`, form([]));
  const topics = await w.p.request('GET', '/contacts/gil@topic-all-inbox.test/topics', { key: team.key });
  t.deepEqual(
    topics.body.data.map((x: { name: string; subscription: string }) => [x.name, x.subscription]),
    [['News', 'opt_out']],
  );
  await w.p.request('POST', `/unsubscribe/${token}/preferences`, form([['topic', news]]));
  t.like((await w.p.request('GET', `/contacts/${contact.body.id}`, { key: team.key })).body, { unsubscribed: true });
  const skipped = await send(w, team, { from, to: address, subject: 'News 2', text: 'x', topic_id: news });
  t.like(await w.p.db('email_recipients').where({ email_id: skipped }).first(), { status: 'suppressed' });

  const again = await w.p.request('POST', all, form([['unsubscribed', 'false']]));
  t.regex(again.text, /role="status">You are subscribed again\./);
  t.like((await w.p.request('GET', `/contacts/${contact.body.id}`, { key: team.key })).body, { unsubscribed: false });
  await send(w, team, { from, to: address, subject: 'News 3', text: 'x', topic_id: news });
  t.is(w.sink.deliveredTo(address).filter((m) => m.raw.toString().includes('Subject: News 3')).length, 1);
  t.deepEqual(
    (await contactEvents(w.p, team.id)).map((e) => [e.type, e.data.unsubscribed]),
    [
      ['contact.created', false],
      ['contact.updated', true],
      ['contact.updated', false],
    ],
  );

  // Subscribing an address that is no contact makes none.
  const other = 'hana@topic-all-inbox.test';
  await send(w, team, { from, to: other, subject: 'News 4', text: 'x', topic_id: news });
  const otherToken = tokenOf(unsubscribeUrl(w.sink.deliveredTo(other)[0].raw)!);
  t.is((await w.p.request('POST', `/unsubscribe/${otherToken}/all`, form([['unsubscribed', 'false']]))).status, 200);
  t.is((await w.p.request('GET', `/contacts/${other}`, { key: team.key })).status, 404);
});
