// Back-pressure of the fan-out (shared/broadcasts/fanout.ts, FanoutDeps.backlog): while more deliveries wait in the
// mta's bulk queue than the mark, no batch is written and the run keeps its lease; it goes on when the backlog
// drains, ends `canceled` when a cancel comes meanwhile, and gives its lease back when the process stops.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, created, fanoutDeps, type Audience } from './helpers/broadcasts.ts';
import { runBroadcast } from '../shared/broadcasts/fanout.ts';
import { until } from './helpers/wait.ts';

let w: MtaWorld;
let a: Audience;
test.before(async () => {
  w = await startMtaWorld();
  a = await audience(
    w,
    'backlog-news.test',
    Array.from({ length: 5 }, (_, i) => ({ email: `r${i}@backlog-inbox.test` })),
  );
});
test.after.always(async () => {
  await w?.close();
});

/** A broadcast sent through the api (queued), ready for a fan-out run. */
async function queued(): Promise<string> {
  return created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    from: a.from,
    subject: 'News',
    html: '<p>News</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    send: true,
  });
}

const emailsOf = async (id: string) => (await w.p.db('emails').where({ broadcast_id: id })).length;
const leaseOf = async (id: string) =>
  (await w.p.db('broadcasts').where({ id }).first('leased_until')).leased_until as Date;

test.serial('no batch is written while the backlog is over its mark; the lease is renewed; then all go', async (t) => {
  const id = await queued();
  let waiting = 50;
  let looks = 0;
  const deps = fanoutDeps(w, {
    leaseMs: 2_000,
    backlog: { waiting: async () => (looks++, waiting), max: 10, pollMs: 50 },
  });
  const run = runBroadcast(deps, id);
  await until(() => looks >= 3);
  const firstLease = await leaseOf(id);
  // Longer than the lease: a run that stopped renewing would lose its broadcast to the next sweep.
  await new Promise((r) => setTimeout(r, 2_500));
  t.is(await emailsOf(id), 0, 'nothing written while the backlog is high');
  t.true((await leaseOf(id)).getTime() > firstLease.getTime(), 'the waiting run renewed its lease');
  t.is((await w.p.db('broadcasts').where({ id }).first()).status, 'sending');
  waiting = 10; // at the mark: not over it
  t.is(await run, 'sent');
  t.is(await emailsOf(id), 5);
  t.is(deps.handed.length, 5, 'every email handed to the mta');
});

test.serial('a cancel while the run waits ends it canceled, with nobody written', async (t) => {
  const id = await queued();
  let looks = 0;
  const deps = fanoutDeps(w, { backlog: { waiting: async () => (looks++, 1_000), max: 10, pollMs: 50 } });
  const run = runBroadcast(deps, id);
  await until(() => looks >= 2);
  t.is((await w.p.request('POST', `/broadcasts/${id}/cancel`, { key: a.team.key })).status, 200);
  t.is(await run, 'canceled');
  t.is(await emailsOf(id), 0);
  t.is(deps.handed.length, 0);
  t.like(await w.p.db('broadcasts').where({ id }).first(), { status: 'canceled' });
});

test.serial('a stopping process gives the lease back while waiting; the next run resumes and sends', async (t) => {
  const id = await queued();
  const stopping = new AbortController();
  let looks = 0;
  const deps = fanoutDeps(w, {
    signal: stopping.signal,
    backlog: { waiting: async () => (looks++, 1_000), max: 10, pollMs: 50 },
  });
  const run = runBroadcast(deps, id);
  await until(() => looks >= 2);
  stopping.abort();
  t.is(await run, 'paused');
  t.is((await leaseOf(id)).getTime(), 0, 'the lease given back at once');
  t.is(await emailsOf(id), 0);
  const next = fanoutDeps(w, { backlog: { waiting: async () => 0, max: 10, pollMs: 50 } });
  t.is(await runBroadcast(next, id), 'sent');
  t.is(await emailsOf(id), 5);
});
