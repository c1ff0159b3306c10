// The processes' connection pools keep an idle connection for DB_IDLE_MS (shared/db/knex.ts): a burst after a quiet
// minute finds its connections open, not a new PostgreSQL backend each to start and warm.
import test from 'ava';
import { createDb, DB_IDLE_MS } from '../shared/db/knex.ts';
import { adminUrl } from './helpers/db.ts';

const backend = async (db: ReturnType<typeof createDb>) =>
  (await db.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('an idle connection is kept for DB_IDLE_MS, whatever pool size a process asks for', async (t) => {
  t.true(DB_IDLE_MS >= 5 * 60_000);
  const db = createDb({ DATABASE_URL: adminUrl }, { min: 0, max: 1 });
  const short = createDb({ DATABASE_URL: adminUrl }, { min: 0, max: 1, idleTimeoutMillis: 100 });
  try {
    t.is((db.client as { pool: { idleTimeoutMillis: number } }).pool.idleTimeoutMillis, DB_IDLE_MS);
    const [kept, reaped] = [await backend(db), await backend(short)];
    // Past the pool's reaping interval (1 s): the short idle time closes its connection, ours stays.
    await pause(2_500);
    t.is(await backend(db), kept);
    t.not(await backend(short), reaped);
  } finally {
    await Promise.all([db.destroy(), short.destroy()]);
  }
});
