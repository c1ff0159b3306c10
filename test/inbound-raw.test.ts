// Where the MX keeps an accepted message's bytes (shared/receiving/raw.ts): up to RAW_INLINE_MAX_BYTES in
// received_raw, committed with its row before the 250 (raw_blob_key null), read from there by the receive job, the
// API's raw download and deleted with the email; a larger one in the blob store before the 250. Real MX on
// loopback, real PostgreSQL, blob store and api routes.
import test from 'ava';
import { mxForFile, storedBytes } from './helpers/receive-job.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { RAW_INLINE_MAX_BYTES } from '../shared/receiving/raw.ts';

const w = mxForFile();

const inline = async (id: string): Promise<Buffer | undefined> =>
  (await w.p.db('received_raw').where({ message_id: id }).first('bytes'))?.bytes;
const message = (id: string) => w.p.db('received_messages').where({ id }).first();
/** A signed link of the api, fetched from the test's api (its PUBLIC_BASE_URL's path and query). */
const get = (link: URL) => fetch(`${w.p.url}${link.pathname}${link.search}`, { headers: { 'user-agent': 'test' } });
const mail = (subject: string, text = 'hello') => ({ from: 'alice@sender.test', subject, text });

test.serial(
  'a small message rides its row before the 250 and stays there: processed, downloaded, deleted',
  async (t) => {
    const { team } = await w.mx.receivingTeam('raw-small.test');
    const id = await w.mx.send(['bob@raw-small.test'], mail('Small', 'x'.repeat(10_000)));
    const row = await message(id);
    const bytes = await inline(id);
    t.truthy(bytes, 'committed with the row before the 250');
    t.is(row.raw_blob_key, null, 'no blob named: no file written before the 250');
    t.is(bytes!.length, row.size);
    t.regex(bytes!.toString(), /^Received: from /);
    t.regex(bytes!.toString(), /Subject: Small/);

    t.is(await processReceived(w.mx.deps, id), 'processed');
    t.deepEqual(await inline(id), bytes, 'still there once processed');
    t.is(await processReceived(w.mx.deps, id), 'skipped', 'a second run finds it processed');
    const email = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
    t.like(email, { subject: 'Small', dropped_reason: null });
    const link = new URL(email.raw.download_url);
    const res = await get(link);
    t.is(res.status, 200);
    t.deepEqual(Buffer.from(await res.arrayBuffer()), bytes, 'the download serves the stored bytes');
    link.searchParams.set('token', 'x'.repeat(43));
    t.is((await get(link)).status, 404, 'a forged link reads nothing');

    t.is((await w.p.request('DELETE', `/emails/receiving/${id}`, { key: team.key })).status, 200);
    t.is(await inline(id), undefined, 'deleted with the email');
  },
);

test.serial('8-bit bytes come back exactly: stored, processed, downloaded', async (t) => {
  const { team } = await w.mx.receivingTeam('raw-8bit.test');
  // Latin-1 bytes that are not UTF-8 (0xe9, 0xff), and every byte value a body may carry but NUL, CR, LF.
  const high = Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((b) => ![0, 10, 13].includes(b)));
  const head = Buffer.from('From: a@sender.test\r\nTo: x@raw-8bit.test\r\nSubject: caf\xe9\r\n\r\n', 'latin1');
  const raw = Buffer.concat([head, high, Buffer.from('\r\n')]);
  const id = await w.mx.send(['x@raw-8bit.test'], { raw });
  const stored = await storedBytes(w.p, id);
  t.true(stored!.subarray(stored!.length - raw.length).equals(raw), 'stored as sent, after our trace field');
  t.is(await processReceived(w.mx.deps, id), 'processed');
  const email = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  const res = await get(new URL(email.raw.download_url));
  t.true(Buffer.from(await res.arrayBuffer()).equals(stored!), 'downloaded byte for byte');
});

test.serial('a message over RAW_INLINE_MAX_BYTES goes to the blob store before the 250', async (t) => {
  await w.mx.receivingTeam('raw-large.test');
  const id = await w.mx.send(['bob@raw-large.test'], mail('Large', 'y'.repeat(RAW_INLINE_MAX_BYTES + 1000)));
  const row = await message(id);
  t.true(row.size > RAW_INLINE_MAX_BYTES);
  t.is(await inline(id), undefined);
  const stored = await w.p.deps.blobs.get(row.raw_blob_key);
  t.is(stored?.length, row.size, 'durable in the blob store before the 250');
  t.is(await processReceived(w.mx.deps, id), 'processed');
  t.deepEqual(await w.p.deps.blobs.get(row.raw_blob_key), stored);
});

test.serial('a message dropped is recorded without its bytes, in the same commit', async (t) => {
  const { team } = await w.mx.receivingTeam('raw-dropped.test');
  const id = await w.mx.send(['bob@raw-dropped.test'], mail('Dropped'));
  t.truthy(await inline(id));
  await w.p.db('teams').where({ id: team.id }).update({ status: 'suspended' });
  t.is(await processReceived(w.mx.deps, id), 'processed');
  t.is((await w.p.db('received_emails').where({ id }).first()).dropped_reason, 'team_blocked');
  t.is(await inline(id), undefined);
  await w.p.db('teams').where({ id: team.id }).update({ status: 'active' });
  const email = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  t.is(email.raw, null, 'no raw link for bytes that are not kept');
});

test.serial('two runs of one message at once: one processes it, one received email', async (t) => {
  await w.mx.receivingTeam('raw-race.test');
  const id = await w.mx.send(['bob@raw-race.test'], mail('Race'));
  const bytes = await inline(id);
  const outcomes = await Promise.all([processReceived(w.mx.deps, id), processReceived(w.mx.deps, id)]);
  t.deepEqual(outcomes.sort(), ['processed', 'skipped']);
  t.deepEqual(await inline(id), bytes);
  t.is((await w.p.db('received_emails').where({ id })).length, 1);
});

test.serial('a message for two teams: each copy its own inline bytes, its own trace field', async (t) => {
  await w.mx.receivingTeam('raw-one.test');
  await w.mx.receivingTeam('raw-two.test');
  await w.mx.send(['a@raw-one.test', 'b@raw-two.test'], mail('Both'));
  const rows = await w.p.db('received_messages').whereRaw(`rcpt_to && array['a@raw-one.test', 'b@raw-two.test']`);
  t.is(rows.length, 2);
  const copies = await Promise.all(rows.map((r: { id: string }) => inline(r.id)));
  t.deepEqual(copies.map((c) => /for <(\S+)>/.exec(c!.toString())?.[1]).sort(), ['a@raw-one.test', 'b@raw-two.test']);
  t.notDeepEqual(copies[0], copies[1]);
  copies.forEach((c, i) => {
    t.is(c!.length, rows[i].size, 'each copy its own length');
    t.regex(c!.toString(), /^Received: [^]*Subject: Both/);
  });
});
