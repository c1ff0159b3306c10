// A contact's topic choices (`/contacts/{id_or_email}/topics`): the rows of topic_subscriptions for its address,
// the same ones the unsubscribe and preference pages write and a send under a topic reads.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { createContact, createTopic } from './helpers/contacts.ts';
import { setSubscription } from '../shared/topics/subscriptions.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test("list: every topic of the team, newest first, with the contact's choice or the topic's default", async (t) => {
  const team = await p.createTeam();
  const news = await createTopic(p, team, { name: 'News', default_subscription: 'opt_in', description: 'Weekly' });
  const offers = await createTopic(p, team, { name: 'Offers', default_subscription: 'opt_out' });
  const events = await createTopic(p, team, { name: 'Events', default_subscription: 'opt_in' });
  await createTopic(p, await p.createTeam(), { name: 'Not ours' });
  const id = await createContact(p, team, { email: 'Gail@Example.com' });

  const list = await p.request('GET', `/contacts/${id}/topics`, { key: team.key });
  t.is(list.status, 200, list.text);
  t.deepEqual(list.body, {
    object: 'list',
    has_more: false,
    data: [
      { id: events, name: 'Events', description: null, subscription: 'opt_in' },
      { id: offers, name: 'Offers', description: null, subscription: 'opt_out' },
      { id: news, name: 'News', description: 'Weekly', subscription: 'opt_in' },
    ],
  });
  // A choice made elsewhere for the address (the preference page records it lower case) shows here.
  await setSubscription(p.db, { teamId: team.id, topicId: news, email: 'GAIL@example.com', subscription: 'opt_out' });
  const page = await p.request('GET', '/contacts/gail@example.com/topics?limit=1&after=' + offers, { key: team.key });
  t.deepEqual(page.body, {
    object: 'list',
    has_more: false,
    data: [{ id: news, name: 'News', description: 'Weekly', subscription: 'opt_out' }],
  });
  t.like((await p.request('GET', `/contacts/${id}/topics?limit=2`, { key: team.key })).body, { has_more: true });
  isError(t, await p.request('GET', '/contacts/nobody@example.com/topics', { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/contacts/${id}/topics`, { key: (await p.createTeam()).key }), 404, 'not_found');
});

test("update takes the SDK's bare array or {topics}; the last choice for a topic wins; all or none", async (t) => {
  const team = await p.createTeam();
  const news = await createTopic(p, team, { name: 'News', default_subscription: 'opt_in' });
  const offers = await createTopic(p, team, { name: 'Offers', default_subscription: 'opt_out' });
  const id = await createContact(p, team, { email: 'hal@example.com' });

  const bare = await p.request('PATCH', `/contacts/${id}/topics`, {
    key: team.key,
    body: [
      { id: offers, subscription: 'opt_in' },
      { id: news, subscription: 'opt_in' },
      { id: offers, subscription: 'opt_out' },
    ],
  });
  t.is(bare.status, 200, bare.text);
  t.deepEqual(bare.body, {
    object: 'contact_topics',
    id,
    contact_id: id,
    topics: [
      { id: offers, subscription: 'opt_out' },
      { id: news, subscription: 'opt_in' },
    ],
  });
  const wrapped = await p.request('PATCH', '/contacts/HAL@example.com/topics', {
    key: team.key,
    body: { topics: [{ id: news, subscription: 'opt_out' }] },
  });
  t.is(wrapped.status, 200, wrapped.text);
  const rows = await p.db('topic_subscriptions').where({ team_id: team.id }).orderBy('topic_id');
  t.deepEqual(
    rows.map((r) => [r.topic_id, r.email, r.subscription]),
    [
      [news, 'hal@example.com', 'opt_out'],
      [offers, 'hal@example.com', 'opt_out'],
    ],
  );

  const othersTopic = await createTopic(p, await p.createTeam());
  for (const [body, path, name] of [
    [
      [
        { id: news, subscription: 'opt_in' },
        { id: othersTopic, subscription: 'opt_in' },
      ],
      'topics.1.id',
      'validation_error',
    ],
    [{ topics: [{ id: 'nope', subscription: 'opt_in' }] }, 'topics.0.id', 'validation_error'],
    [{ topics: [{ id: news, subscription: 'sometimes' }] }, 'topics.0.subscription', 'validation_error'],
    [{ topics: 'news' }, 'topics', 'validation_error'],
    [{}, 'topics', 'missing_required_field'],
  ] as const) {
    const res = await p.request('PATCH', `/contacts/${id}/topics`, { key: team.key, body });
    isError(t, res, 422, name);
    t.is(res.body.errors[0].path, path, JSON.stringify(body));
  }
  // The refused requests recorded nothing, not even their valid first choice.
  t.is((await p.db('topic_subscriptions').where({ topic_id: news }).first()).subscription, 'opt_out');
  const empty = await p.request('PATCH', `/contacts/${id}/topics`, { key: team.key, body: [] });
  t.deepEqual(empty.body, { object: 'contact_topics', id, contact_id: id, topics: [] });
  isError(
    t,
    await p.request('PATCH', '/contacts/nobody@example.com/topics', { key: team.key, body: [] }),
    404,
    'not_found',
  );
});

test("a send under a topic follows the contact's choice", async (t) => {
  const team = await p.createTeam();
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  ).name;
  const topic = await createTopic(p, team, { default_subscription: 'opt_in' });
  const out = `delivered@${p.config.SIMULATOR_DOMAIN}`;
  const stays = `delayed@${p.config.SIMULATOR_DOMAIN}`;
  await createContact(p, team, { email: out, topics: [{ id: topic, subscription: 'opt_in' }] });
  await createContact(p, team, { email: stays });
  const optOut = await p.request('PATCH', `/contacts/${out}/topics`, {
    key: team.key,
    body: [{ id: topic, subscription: 'opt_out' }],
  });
  t.is(optOut.status, 200, optOut.text);
  const sent = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `news@${managed}`, to: [out, stays], subject: 'News', text: 'x', topic_id: topic },
  });
  t.is(sent.status, 200, sent.text);
  const recipients = await p.db('email_recipients').where({ email_id: sent.body.id }).orderBy('address');
  t.deepEqual(
    recipients.map((r) => [r.address, r.status]),
    [
      [stays, 'queued'],
      [out, 'suppressed'],
    ],
  );
});
