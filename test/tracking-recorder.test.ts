// The engagement recorder's cadence (shared/tracking/recorder.ts) against a real database: a steady stream of hits
// is written about once per delayMs, not in as many small transactions as the previous commit takes (which a drain
// that kept taking what arrived while it wrote made of it: ~20 hits a transaction at 2,000 hits a second, bench/README
// "A steady stream"); a burst of more than maxRows is written at once in batches of maxRows; flush() and close()
// write everything added before them. The hits name recipients that do not exist, so each batch runs the insert and
// records nothing: what is counted is the transactions.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from './helpers/db.ts';
import { until } from './helpers/wait.ts';
import { createDb } from '../shared/db/knex.ts';
import { engagementRecorder } from '../shared/tracking/recorder.ts';
import { createLogger } from '../shared/logger.ts';
import type { Hit } from '../shared/tracking/engagement.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: ReturnType<typeof createDb>;
test.before(async () => {
  database = await createTestDatabase({ asyncCommit: true });
  db = createDb({ DATABASE_URL: database.url });
});
test.after.always(async () => {
  await db?.destroy();
  await database?.drop();
});

const hit = (): Hit => ({
  kind: 'open',
  recipientId: randomUUID(),
  domainId: randomUUID(),
  teamId: randomUUID(),
  linkIndex: null,
  url: null,
  at: new Date(),
  userAgent: 'test',
  ip: null,
  machine: null,
});

function counted(delayMs: number, maxRows: number) {
  const batches: number[] = [];
  const recorder = engagementRecorder(db, createLogger({ LOG_LEVEL: 'silent' }, 'test'), {
    delayMs,
    maxRows,
    maxPending: 10_000,
    machineWindowSeconds: 2,
    recorded: () => batches.push(performance.now()),
  });
  return { recorder, batches };
}

test.serial('a steady stream is written about once per delayMs, not once per commit', async (t) => {
  const { recorder, batches } = counted(50, 500);
  const started = performance.now();
  // One hit every 2 ms for 600 ms: 300 hits, far fewer than maxRows in any 50 ms.
  for (let i = 0; i < 300; i++) {
    recorder.add(hit());
    await new Promise((r) => setTimeout(r, 2));
  }
  const elapsed = performance.now() - started;
  await recorder.close();
  // One transaction per timer (50 ms after the first hit that waits), and the close's: a few more when a commit is
  // slow, never one per commit (each of these commits takes a few ms, so that would be well over a hundred).
  t.true(batches.length >= 2, `${batches.length} batches`);
  t.true(batches.length <= Math.ceil(elapsed / 50) + 3, `${batches.length} batches in ${Math.round(elapsed)} ms`);
});

test.serial('a burst past maxRows is written at once, in batches of maxRows, before any timer', async (t) => {
  const { recorder, batches } = counted(10_000, 10);
  const started = performance.now();
  for (let i = 0; i < 25; i++) recorder.add(hit());
  // The first full batch starts the drain, which takes all 25 (10, 10, 5) without waiting for the 10 s timer.
  await until(() => batches.length >= 3, { timeoutMs: 5_000, what: 'three batches' });
  t.is(batches.length, 3);
  t.true(performance.now() - started < 5_000);
  await recorder.close();
  t.is(batches.length, 3, 'nothing was left for close');
});

test.serial('flush() writes what was added before it, without waiting for the timer', async (t) => {
  const { recorder, batches } = counted(10_000, 500);
  for (let i = 0; i < 5; i++) recorder.add(hit());
  await recorder.flush();
  t.is(batches.length, 1);
  recorder.add(hit());
  await recorder.close();
  t.is(batches.length, 2);
});

test.serial("a batch's commit does not wait for the disk; the database's other transactions still do", async (t) => {
  // A database at PostgreSQL's default (synchronous_commit on), whose engagement insert notes the setting it ran
  // under: a statement trigger fires even for these hits, which name no recipient and insert no row.
  const strict = await createTestDatabase();
  const sdb = createDb({ DATABASE_URL: strict.url });
  t.teardown(async () => {
    await sdb.destroy();
    await strict.drop();
  });
  await sdb.raw(`create table commit_seen (setting text not null);
    create function note_commit() returns trigger language plpgsql as $$
      begin insert into commit_seen values (current_setting('synchronous_commit')); return null; end $$;
    create trigger note_commit after insert on email_engagements for each statement execute function note_commit()`);
  const recorder = engagementRecorder(sdb, createLogger({ LOG_LEVEL: 'silent' }, 'test'), {
    delayMs: 10,
    maxRows: 500,
    maxPending: 10_000,
    machineWindowSeconds: 2,
  });
  recorder.add(hit());
  await recorder.close();
  t.deepEqual(
    (await sdb('commit_seen').select('setting')).map((r) => r.setting),
    ['off'],
  );
  // The setting was the batch's transaction's alone: the pool's connections are back at the default.
  const { rows } = await sdb.raw(`select current_setting('synchronous_commit') as setting`);
  t.is(rows[0].setting, 'on');
});
