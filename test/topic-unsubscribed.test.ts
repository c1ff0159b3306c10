// A contact's global `unsubscribed` in the send path: it wins over every topic choice for a send under a topic (at
// the accept, and again before delivery), it is read in the topic's one query whatever the number of recipients, and
// a send without a topic (transactional mail) is not concerned by it.
import test from 'ava';
import { Resend } from 'resend';
import type { Knex } from 'knex';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { createTopic, send, senderTeam } from './helpers/topic-sends.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { releaseDue } from '../shared/emails/store.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const UNSUBSCRIBED = 'the contact is unsubscribed from everything (its `unsubscribed`)';

const subjects = (address: string) =>
  w.sink.deliveredTo(address).map((m) => /^Subject: (.*)\r$/m.exec(m.raw.toString())?.[1]);

test('at the accept: unsubscribed wins over an opt_in; others (contacts or not) are sent to; mail without a topic is not concerned', async (t) => {
  const { team, from } = await senderTeam(w, 'unsub-accept.test');
  w.mx('unsub-inbox.test');
  const resend = new Resend(team.key, { baseUrl: w.p.url } as never);
  const topic = await createTopic(w, team, { name: 'Offers', default_subscription: 'opt_out' });
  const chosen = [{ id: topic, subscription: 'opt_in' as const }];
  t.is(
    (await resend.contacts.create({ email: 'ann@unsub-inbox.test', unsubscribed: true, topics: chosen })).error,
    null,
  );
  t.is((await resend.contacts.create({ email: 'bo@unsub-inbox.test', topics: chosen })).error, null);
  // cy is no contact: its own choice decides.
  await w.p
    .db('topic_subscriptions')
    .insert({ topic_id: topic, team_id: team.id, email: 'cy@unsub-inbox.test', subscription: 'opt_in' });

  const to = ['ANN@unsub-inbox.test', 'bo@unsub-inbox.test', 'cy@unsub-inbox.test'];
  const id = await send(w, team, { from, to, subject: 'Sale', text: 'x', topic_id: topic });
  const rows = await w.p.db('email_recipients').where({ email_id: id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => [r.address, r.status, r.last_response]),
    [
      ['ANN@unsub-inbox.test', 'suppressed', UNSUBSCRIBED],
      ['bo@unsub-inbox.test', 'delivered', rows[1].last_response],
      ['cy@unsub-inbox.test', 'delivered', rows[2].last_response],
    ],
  );
  const [event] = await w.p.db('events').where({ team_id: team.id, type: 'email.suppressed' });
  t.like(event.data, {
    email_id: id,
    to: ['ANN@unsub-inbox.test'],
    suppressed: { type: 'Suppressed', reason: 'contact_unsubscribed', topic_id: topic },
  });
  t.regex(event.data.suppressed.message, /ANN@unsub-inbox\.test is unsubscribed from everything/);

  // In a batch too; and a send without a topic (a receipt) still reaches her.
  const batch = await w.p.request('POST', '/emails/batch', {
    key: team.key,
    body: [
      { from, to: 'ann@unsub-inbox.test', subject: 'Sale 2', text: 'x', topic_id: topic },
      { from, to: 'ann@unsub-inbox.test', subject: 'Your receipt', text: 'x' },
    ],
  });
  t.is(batch.status, 200, batch.text);
  const [sale, receipt] = batch.body.data.map((d: { id: string }) => d.id);
  t.like(await w.p.db('email_recipients').where({ email_id: sale }).first(), { status: 'suppressed' });
  t.like(await w.p.db('email_recipients').where({ email_id: receipt }).first(), { status: 'queued' });
  await processDelivery(w.deps, receipt);
  t.deepEqual(subjects('ann@unsub-inbox.test'), ['Your receipt']);
});

test('before delivery: a contact unsubscribed after a scheduled send was accepted is suppressed without an attempt', async (t) => {
  const { team, from } = await senderTeam(w, 'unsub-later.test');
  w.mx('unsub-later-inbox.test');
  const resend = new Resend(team.key, { baseUrl: w.p.url } as never);
  const topic = await createTopic(w, team, { name: 'Monthly', default_subscription: 'opt_in' });
  await resend.contacts.create({ email: 'dee@unsub-later-inbox.test' });
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from,
      to: ['dee@unsub-later-inbox.test', 'eli@unsub-later-inbox.test'],
      subject: 'June',
      text: 'x',
      topic_id: topic,
      scheduled_at: 'in 1 hour',
    },
  });
  t.is(res.status, 200, res.text);
  t.is((await resend.contacts.update({ email: 'dee@unsub-later-inbox.test', unsubscribed: true })).error, null);
  const later = new Date(Date.now() + 2 * 3600_000);
  t.deepEqual(await releaseDue(w.p.db, later), [res.body.id]);
  await processDelivery(w.deps, res.body.id, later);

  const rows = await w.p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => [r.address, r.status]),
    [
      ['dee@unsub-later-inbox.test', 'suppressed'],
      ['eli@unsub-later-inbox.test', 'delivered'],
    ],
  );
  t.is(rows[0].last_response, UNSUBSCRIBED);
  const [event] = await w.p.db('events').where({ team_id: team.id, type: 'email.suppressed' });
  t.like(event.data, { to: ['dee@unsub-later-inbox.test'], suppressed: { reason: 'contact_unsubscribed' } });
  t.deepEqual(
    (await w.p.db('delivery_attempts').where({ email_id: res.body.id })).map((a) => a.recipients),
    [['eli@unsub-later-inbox.test']],
  );
  t.deepEqual(subjects('dee@unsub-later-inbox.test'), []);
});

// Serial (ava runs serial tests before the others): the count is of every query the api makes meanwhile.
test.serial(
  "one query reads the topic, the choices and the contacts' unsubscribed, for 1 recipient as for 50",
  async (t) => {
    const { team, from } = await senderTeam(w, 'unsub-cost.test');
    w.mx('unsub-cost-inbox.test');
    const topic = await createTopic(w, team, { name: 'Digest', default_subscription: 'opt_in' });
    const many = Array.from({ length: 50 }, (_, i) => `r${i}@unsub-cost-inbox.test`);
    for (const email of many.slice(0, 10)) await w.p.request('POST', '/contacts', { key: team.key, body: { email } });
    await w.p.db('contacts').where({ team_id: team.id }).update({ unsubscribed: true });

    const reads = async (to: string[]) => {
      const seen: string[] = [];
      const count = (q: Knex.Sql) => {
        if (/\b(topic_subscriptions|contacts)\b/.test(q.sql)) seen.push(q.sql);
      };
      w.p.db.on('query', count);
      try {
        const res = await w.p.request('POST', '/emails', {
          key: team.key,
          body: { from, to, subject: 'Digest', text: 'x', topic_id: topic },
        });
        t.is(res.status, 200, res.text);
      } finally {
        w.p.db.off('query', count);
      }
      return seen;
    };
    const one = await reads(many.slice(0, 1));
    const fifty = await reads(many);
    t.is(one.length, 1, one.join('\n'));
    t.deepEqual(fifty, one);
    const suppressed = await w.p
      .db('email_recipients')
      .join('emails', 'emails.id', 'email_recipients.email_id')
      .where({ 'emails.team_id': team.id, 'email_recipients.status': 'suppressed' })
      .count({ n: '*' })
      .first();
    t.is(Number(suppressed?.n), 11, 'the first send’s one and the second’s ten');
  },
);
