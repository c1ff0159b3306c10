// Where the MX keeps an accepted message's bytes (shared/receiving/raw.ts): up to RAW_INLINE_MAX_BYTES in
// received_raw, committed with its row before the 250 and moved to the blob store by the receive job in the
// transaction that marks it processed; a larger one in the blob store before the 250. Real MX on loopback, real
// PostgreSQL and blob store.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startTestMx, type TestMx } from './helpers/receive-job.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { RAW_INLINE_MAX_BYTES } from '../shared/receiving/raw.ts';

let p: Platform;
let mx: TestMx;

test.before(async () => {
  p = await startPlatform();
  mx = await startTestMx(p);
});
test.after.always(async () => {
  await mx?.close();
  await p?.close();
});

const inline = async (id: string): Promise<Buffer | undefined> =>
  (await p.db('received_raw').where({ message_id: id }).first('bytes'))?.bytes;
const message = (id: string) => p.db('received_messages').where({ id }).first();
const mail = (subject: string, text = 'hello') => ({ from: 'alice@sender.test', subject, text });

test.serial('a small message rides its row before the 250 and reaches the blob store when processed', async (t) => {
  await mx.receivingTeam('raw-small.test');
  const id = await mx.send(['bob@raw-small.test'], mail('Small', 'x'.repeat(10_000)));
  const row = await message(id);
  const bytes = await inline(id);
  t.truthy(bytes, 'committed with the row before the 250');
  t.is(bytes!.length, row.size);
  t.regex(bytes!.toString(), /^Received: from /);
  t.regex(bytes!.toString(), /Subject: Small/);
  t.is(await p.deps.blobs.get(row.raw_blob_key), null, 'no file written before the 250');

  t.is(await processReceived(mx.deps, id), 'processed');
  t.deepEqual(await p.deps.blobs.get(row.raw_blob_key), bytes, 'the same bytes, now where raw_blob_key says');
  t.is(await inline(id), undefined, 'the inline copy is gone with the processed mark');
  t.is((await message(id)).status, 'processed');
  t.is(await processReceived(mx.deps, id), 'skipped', 'a second run finds it processed');
  t.deepEqual(await p.deps.blobs.get(row.raw_blob_key), bytes);
});

test.serial('a message over RAW_INLINE_MAX_BYTES goes to the blob store before the 250', async (t) => {
  await mx.receivingTeam('raw-large.test');
  const id = await mx.send(['bob@raw-large.test'], mail('Large', 'y'.repeat(RAW_INLINE_MAX_BYTES + 1000)));
  const row = await message(id);
  t.true(row.size > RAW_INLINE_MAX_BYTES);
  t.is(await inline(id), undefined);
  const stored = await p.deps.blobs.get(row.raw_blob_key);
  t.is(stored?.length, row.size, 'durable in the blob store before the 250');
  t.is(await processReceived(mx.deps, id), 'processed');
  t.deepEqual(await p.deps.blobs.get(row.raw_blob_key), stored);
});

test.serial('a message dropped before its body is read leaves no bytes anywhere', async (t) => {
  const { team } = await mx.receivingTeam('raw-dropped.test');
  const id = await mx.send(['bob@raw-dropped.test'], mail('Dropped'));
  t.truthy(await inline(id));
  await p.db('teams').where({ id: team.id }).update({ status: 'suspended' });
  t.is(await processReceived(mx.deps, id), 'processed');
  t.is((await p.db('received_emails').where({ id }).first()).dropped_reason, 'team_blocked');
  t.is(await inline(id), undefined);
  t.is(await p.deps.blobs.get((await message(id)).raw_blob_key), null);
});

test.serial('two runs of one message at once: one processes it, the bytes end in the blob store once', async (t) => {
  await mx.receivingTeam('raw-race.test');
  const id = await mx.send(['bob@raw-race.test'], mail('Race'));
  const bytes = await inline(id);
  const outcomes = await Promise.all([processReceived(mx.deps, id), processReceived(mx.deps, id)]);
  t.deepEqual(outcomes.sort(), ['processed', 'skipped']);
  t.deepEqual(await p.deps.blobs.get((await message(id)).raw_blob_key), bytes);
  t.is(await inline(id), undefined);
  t.is((await p.db('received_emails').where({ id })).length, 1);
});

test.serial('a message for two teams: each copy its own inline bytes, its own trace field', async (t) => {
  await mx.receivingTeam('raw-one.test');
  await mx.receivingTeam('raw-two.test');
  await mx.send(['a@raw-one.test', 'b@raw-two.test'], mail('Both'));
  const rows = await p.db('received_messages').whereRaw(`rcpt_to && array['a@raw-one.test', 'b@raw-two.test']`);
  t.is(rows.length, 2);
  const [one, two] = await Promise.all(rows.map((r: { id: string }) => inline(r.id)));
  t.regex(one!.toString(), /for <(a@raw-one|b@raw-two)\.test>/);
  t.regex(two!.toString(), /for <(a@raw-one|b@raw-two)\.test>/);
  t.notDeepEqual(one, two);
});
