// The MX's memory of served receiving domains (inbound/mx/recipient-cache.ts, INBOUND_RCPT_CACHE_MS): a domain that
// starts receiving is accepted at once (nothing negative is remembered); one that stops may be accepted until the
// memory runs out, then is refused at RCPT, and what was accepted meanwhile the receive job drops as no_mailbox.
// Real MX on loopback and PostgreSQL; the class itself with a clock of the test's.
import test from 'ava';
import { mxForFile } from './helpers/receive-job.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { RecipientCache } from '../inbound/mx/recipient-cache.ts';

const TTL_MS = 400;
const w = mxForFile({ INBOUND_RCPT_CACHE_MS: String(TTL_MS) });

const mail = { from: 'alice@sender.test', subject: 'Hi', text: 'hello' };
const refusal = async (to: string) =>
  w.mx.send([to], mail).then(
    () => 'accepted',
    (err: { responseCode?: number }) => err.responseCode,
  );
const setReceiving = (name: string, receiving: 'enabled' | 'disabled') =>
  w.p.db('domains').where({ name }).update({ receiving });

test.serial('a domain that starts receiving is accepted at once: a refusal is never remembered', async (t) => {
  await w.mx.receivingTeam('rc-late.test');
  await setReceiving('rc-late.test', 'disabled');
  t.is(await refusal('a@rc-late.test'), 550);
  await setReceiving('rc-late.test', 'enabled');
  t.is(await refusal('a@rc-late.test'), 'accepted');
});

test.serial(
  'a domain that stops receiving: accepted while remembered, dropped by the receive job, then refused',
  async (t) => {
    await w.mx.receivingTeam('rc-stop.test');
    t.is(await refusal('a@rc-stop.test'), 'accepted');
    await setReceiving('rc-stop.test', 'disabled');
    const id = await w.mx.send(['b@rc-stop.test'], mail);
    t.is(await processReceived(w.mx.deps, id), 'processed');
    t.is((await w.p.db('received_emails').where({ id }).first()).dropped_reason, 'no_mailbox', 'the job looks again');
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    t.is(await refusal('c@rc-stop.test'), 550, 'refused at RCPT once the memory ran out');
  },
);

test('RecipientCache: remembers for its time only, nothing at 0, the oldest host goes first past 10,000', (t) => {
  let now = 1_000;
  const served = { kind: 'mail' as const, teamId: 't', domainId: 'd' };
  const cache = new RecipientCache(100, () => now);
  cache.set('a.test', served);
  t.deepEqual(cache.get('a.test'), served);
  now += 99;
  t.deepEqual(cache.get('a.test'), served);
  now += 1;
  t.is(cache.get('a.test'), undefined);
  const off = new RecipientCache(0, () => now);
  off.set('a.test', served);
  t.is(off.get('a.test'), undefined);
  for (let i = 0; i <= 10_000; i++) cache.set(`h${i}.test`, served);
  t.is(cache.get('h0.test'), undefined);
  t.deepEqual(cache.get('h1.test'), served);
  t.deepEqual(cache.get('h10000.test'), served);
});
