// How the worker finds new events without a NOTIFY (worker/webhooks.ts): `eventsDue`, one index probe past the
// fan-out cursor. It says yes for a committed event, no once the fan-out has taken it, and no for an event held back
// behind an older transaction still running, until that one ends. Writing an event notifies nobody: no trigger.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { EVENTS_DUE_SQL, eventsDue, fanOutSettled } from '../shared/webhooks/fanout.ts';
import { recordEvent } from '../shared/events.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

/**
 * Whether it turns due within 10 s: xmin is the cluster's, so a transaction of another database's test (a CI run
 * beside this one) holds a fresh event back for as long as it runs.
 */
async function turnsDue(): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (!(await eventsDue(p.db))) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

test.serial('an event past the cursor is due until the fan-out takes it', async (t) => {
  const team = await p.createTeam('Look');
  await fanOutSettled(p.db);
  t.false(await eventsDue(p.db), 'nothing past the cursor');
  await recordEvent(p.db, team.id, 'domain.deleted', { id: 'x' });
  t.true(await turnsDue());
  await fanOutSettled(p.db);
  t.false(await eventsDue(p.db), 'taken');
});

test.serial('an event behind an older running transaction is not due until that one ends', async (t) => {
  const team = await p.createTeam('Held');
  await fanOutSettled(p.db);
  const older = await p.db.transaction();
  try {
    // The older transaction gets its xid by writing; the younger commits an event above it.
    await recordEvent(older, team.id, 'domain.deleted', { id: 'older' });
    await recordEvent(p.db, team.id, 'domain.deleted', { id: 'younger' });
    t.false(await eventsDue(p.db), 'held back: a fan-out now could not take it');
    await older.commit();
  } catch (err) {
    await older.rollback();
    throw err;
  }
  t.true(await turnsDue(), 'due once the older one committed');
  await fanOutSettled(p.db);
  t.false(await eventsDue(p.db));
});

test('the probe reads the index, not the table; writing an event fires no trigger', async (t) => {
  const plan = (await p.db.raw(`EXPLAIN ${EVENTS_DUE_SQL}`)).rows
    .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
    .join('\n');
  t.regex(plan, /Index (Only )?Scan using events_xid_id/);
  t.notRegex(plan, /Seq Scan on events/);
  const triggers = await p.db('pg_trigger').where({ tgrelid: p.db.raw("'events'::regclass"), tgisinternal: false });
  t.deepEqual(triggers, []);
});
