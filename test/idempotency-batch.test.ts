// Idempotency-Key on POST /emails/batch: the replay answers the same ids and sends nothing twice, another batch
// under the key is 409, and a batch whose every item is refused is stored and replayed too.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { isRefusal, keyRow } from './helpers/idempotency.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('POST /emails/batch with an Idempotency-Key: the replay answers the same ids, nothing is sent twice, another body is 409', async (t) => {
  const team = await p.createTeam();
  const managed = await p.db('domains').where({ team_id: team.id, managed: true }).first();
  const sim = (local: string) => `${local}@${p.config.SIMULATOR_DOMAIN}`;
  const batch = [
    { from: `Shop <shop@${managed.name}>`, to: sim('delivered'), subject: 'Batch one', text: 'One' },
    {
      from: `Shop <shop@${managed.name}>`,
      to: [sim('delivered+two'), sim('bounced')],
      subject: 'Batch two',
      text: 'Two',
    },
  ];
  const idem = 'batch-order-7';
  const send = (body: unknown) =>
    p.request('POST', '/emails/batch', { key: team.key, body, headers: { 'idempotency-key': idem } });

  const first = await send(batch);
  t.is(first.status, 200, first.text);
  t.is(first.body.data.length, 2);
  t.is(first.headers.get('idempotent-replayed'), null);
  const ids = first.body.data.map((d: { id: string }) => d.id);

  // The same JSON value with other key order, at / and under /api/v1.
  const reordered = batch.map((e) => Object.fromEntries(Object.entries(e).reverse()));
  const again = await send(reordered);
  const v1 = await p.request('POST', '/api/v1/emails/batch', {
    key: team.key,
    body: batch,
    headers: { 'idempotency-key': idem },
  });
  for (const res of [again, v1]) {
    t.is(res.status, 200, res.text);
    t.deepEqual(res.body, first.body);
    t.is(res.headers.get('idempotent-replayed'), 'true');
  }

  const emails = await p.db('emails').where({ team_id: team.id }).orderBy('created_at');
  t.deepEqual(emails.map((e) => e.id).sort(), [...ids].sort(), 'one set of email rows');
  t.deepEqual(emails.map((e) => e.subject).sort(), ['Batch one', 'Batch two']);
  t.is(Number((await p.db('email_recipients').whereIn('email_id', ids).count({ n: '*' }))[0].n), 3);
  t.like(await keyRow(p, team.id, idem), { status: 'done', response_status: 200 });
  t.deepEqual((await keyRow(p, team.id, idem)).response_body, first.body);

  // A different batch under the same key: refused, nothing stored.
  for (const body of [[batch[0]], [batch[0], { ...batch[1], subject: 'Batch two, again' }], [...batch, batch[0]]]) {
    isRefusal(t, await send(body), 409, 'invalid_idempotent_request');
  }
  t.is(Number((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n), 2);
  t.deepEqual((await send(batch)).body, first.body, 'the key still replays its answer');
});

test('a permissive batch whose every item is refused: 200 with the errors, stored under the key and replayed', async (t) => {
  const team = await p.createTeam();
  const body = [
    { to: 'a@example.com', subject: 'No from', text: 'x' },
    { from: 'not an address', to: 'b@example.com', subject: 'Bad from', text: 'x' },
  ];
  const headers = { 'idempotency-key': 'all-refused-1', 'x-batch-validation': 'permissive' };
  const first = await p.request('POST', '/emails/batch', { key: team.key, body, headers });
  t.is(first.status, 200, first.text);
  t.deepEqual(first.body.data, []);
  t.deepEqual(
    first.body.errors.map((e: { index: number }) => e.index),
    [0, 1],
  );
  t.like(await keyRow(p, team.id, 'all-refused-1'), { status: 'done', response_status: 200 });
  const again = await p.request('POST', '/emails/batch', { key: team.key, body, headers });
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('idempotent-replayed'), 'true');
});
