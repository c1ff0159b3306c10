// Fairness: a broadcast's emails go on the bulk queue, which the mta works with MTA_BULK_CONCURRENCY slots of their
// own; a transactional send on the deliver queue is delivered while the broadcast's backlog is still waiting (here
// one bulk slot and a slow MX: the backlog lasts long after the transactional email is delivered).
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { Children, exited } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';
import { apiSender } from './helpers/mta.ts';
import { fanoutDeps } from './helpers/broadcasts.ts';
import { newId } from '../shared/ids.ts';
import { createQueue, queues } from '../shared/queue.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { createLogger } from '../shared/logger.ts';
import { runBroadcast } from '../shared/broadcasts/fanout.ts';

let w: MtaWorld;
const children = new Children();
test.before(async () => {
  w = await startMtaWorld({ sink: { dataDelayMs: 150 } });
});
test.after.always(async () => {
  await children.killAll();
  await w?.close();
});

test('a transactional send is delivered while a broadcast backlog waits on its own bounded slots', async (t) => {
  t.timeout(180_000);
  const { team, domain, send } = await apiSender(w, 'fair-news.test');
  w.mx('fair-bulk.test');
  w.mx('fair-tx.test');
  const segment = newId();
  await w.p.db('segments').insert({ id: segment, team_id: team.id, name: 'All' });
  const contacts = Array.from({ length: 120 }, (_, i) => ({
    id: newId(),
    team_id: team.id,
    email: `m${i}@fair-bulk.test`,
  }));
  await w.p.db.batchInsert('contacts', contacts, 500);
  await w.p.db.batchInsert(
    'contact_segments',
    contacts.map((c) => ({ segment_id: segment, contact_id: c.id, team_id: team.id })),
    500,
  );
  const made = await w.p.request('POST', '/broadcasts', {
    key: team.key,
    body: {
      segment_id: segment,
      from: `Shop <shop@${domain.name}>`,
      subject: 'Sale',
      html: '<p>Sale</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
      send: true,
    },
  });
  t.is(made.status, 201, made.text);
  // The fan-out as the worker runs it, onto the real bulk queue.
  const bulk = createQueue(w.p.config, queues.deliverBulk);
  const enqueue = deliveryEnqueuer(bulk, createLogger(w.p.config, 'worker'));
  t.is(await runBroadcast({ ...fanoutDeps(w), enqueue, batchSize: 500 }, made.body.id), 'sent');
  await enqueue.flush();
  await bulk.close();

  const mta = children.start('mta/main.ts', w.p.config, { MTA_CONCURRENCY: '8', MTA_BULK_CONCURRENCY: '1' });
  await until(() => w.sink.messages.length >= 2, { what: 'the broadcast delivering', timeoutMs: 120_000 });
  const txId = await send({ to: 'buyer@fair-tx.test', subject: 'Your receipt' });
  await until(async () => (await w.p.db('email_recipients').where({ email_id: txId }).first()).status === 'delivered', {
    what: 'the receipt delivered',
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  const waiting = await w.p
    .db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .where('e.broadcast_id', made.body.id)
    .whereNot('r.status', 'delivered')
    .count({ n: '*' })
    .first();
  t.true(Number(waiting?.n) > 50, `${waiting?.n} broadcast copies still waiting when the receipt was delivered`);
  mta.kill('SIGTERM');
  await exited(mta);
});
