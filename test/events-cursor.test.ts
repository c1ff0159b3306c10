// The two readers of the events table that walk it by (xid, id) past a cursor, the webhook fan-out and the metrics
// rollup, read it in the xid's numeric order: events whose transaction ids cross a power of ten (9,999 → 10,000,
// which sort the other way as text) are each fanned out once and counted once, however the batches cut them. The
// events are written with chosen xids (the column's default is the inserting transaction's), below every running
// transaction, and both cursors are moved back before them.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { fanOutSettled } from '../shared/webhooks/fanout.ts';
import { rollUpAll } from '../shared/email-metrics/rollup.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

/** Per side of the boundary: more than a fan-out batch (500) in all, so batches cut through both sides. */
const N = 600;
const ZERO = '00000000-0000-0000-0000-000000000000';

test.serial('events across 9,999 → 10,000: every one fanned out once and counted once', async (t) => {
  const team = await p.createTeam('Cursor');
  const endpoint = await p.request('POST', '/webhooks', {
    key: team.key,
    body: { endpoint: 'https://hooks.example.com/cursor', events: ['email.failed'] },
  });
  t.is(endpoint.status, 201);
  // The xids chosen must belong to transactions long ended: a young cluster (a fresh machine) is aged first.
  const current = async () => Number((await p.db.raw('select pg_current_xact_id()::text as x')).rows[0].x);
  while ((await current()) < 10_000 + N + 100);
  // Ids made after the endpoint's (an endpoint gets the events that come after it), xids 9,400-9,999 and
  // 10,000-10,599, the numerically larger ones inserted first.
  const xids = [...Array.from({ length: N }, (_, i) => 10_000 + i), ...Array.from({ length: N }, (_, i) => 9_400 + i)];
  await p.db('events').insert(
    xids.map((xid) => ({
      id: newId(),
      team_id: team.id,
      type: 'email.failed',
      data: { to: ['x@example.com'] },
      xid,
    })),
  );
  await p.db('webhook_fanout_cursor').where({ id: 1 }).update({ last_xid: '0', last_event_id: ZERO });
  await p.db('email_metrics_cursor').where({ id: 1 }).update({ last_xid: '0', last_event_id: ZERO });

  await fanOutSettled(p.db);
  const deliveries = await p
    .db('webhook_deliveries')
    .where({ endpoint_id: endpoint.body.id })
    .select('event_id')
    .count({ n: '*' })
    .groupBy('event_id');
  t.is(deliveries.length, 2 * N, 'every event fanned out');
  t.true(
    deliveries.every((d) => Number(d.n) === 1),
    'each once',
  );

  // Batches of 700 cut the 1,200 events inside the 10,000s (numeric order) or inside the 9,000s (text order).
  while ((await rollUpAll(p.db, 700)).events > 0);
  const { failed } = (await p
    .db('email_metric_buckets')
    .where({ team_id: team.id })
    .sum({ failed: 'failed' })
    .first())!;
  t.is(Number(failed), 2 * N, 'each event counted once');
});
