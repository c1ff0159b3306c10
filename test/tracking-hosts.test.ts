// Which domain a tracking host names (shared/tracking/hosts.ts), against a real database: an answer is kept for its
// TTL; a host that keeps being hit has it renewed in the background during the last fifth of its life, so its hits
// never wait for a query (before, every hit of a host waited for the one query at each expiry, behind whatever held
// the tracking thread's pool: a stall a steady stream met every 30 s, bench/README.md); a host left alone expires and
// is asked again; a domain deleted is not answered past the TTL.
import test from 'ava';
import { createTestDatabase } from './helpers/db.ts';
import { createDb } from '../shared/db/knex.ts';
import { newId } from '../shared/ids.ts';
import { createTeam } from '../shared/teams/teams.ts';
import { trackingHosts } from '../shared/tracking/hosts.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: ReturnType<typeof createDb>;
test.before(async () => {
  database = await createTestDatabase({ asyncCommit: true });
  // One connection: a transaction holding it makes every query wait, as a busy pool does.
  db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 1 });
});
test.after.always(async () => {
  await db?.destroy();
  await database?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Settles within `ms`, or answers 'waiting'. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);

test('an answer is renewed ahead of its expiry without a hit waiting; a host left alone expires; a deletion is seen', async (t) => {
  const team = await createTeam(db, { name: 'Hosts' });
  const id = newId();
  await db('domains').insert({
    id,
    team_id: team.id,
    name: 'renew.test',
    status: 'verified',
    tracking_subdomain: 'links',
  });
  let queries = 0;
  db.on('query', (q: { sql: string }) => q.sql.startsWith('select') && q.sql.includes('"domains"') && queries++);
  const ttl = 1000;
  const hosts = trackingHosts(db, ttl);
  const started = Date.now();
  t.deepEqual(await hosts.lookup('links.renew.test'), [{ id, team_id: team.id }]);
  t.is(queries, 1);
  await hosts.lookup('links.renew.test');
  t.is(queries, 1, 'kept');

  // The last fifth of its life, with the pool held: the kept answer at once; one renewal asked, waiting for the pool.
  await sleep(started + ttl * 0.85 - Date.now());
  let release!: () => void;
  const held = db.transaction(async () => new Promise<void>((r) => (release = r)));
  await sleep(50);
  t.deepEqual(await within(hosts.lookup('links.renew.test'), 20), [{ id, team_id: team.id }], 'no wait');
  t.deepEqual(await within(hosts.lookup('links.renew.test'), 20), [{ id, team_id: team.id }]);
  // The domain is deleted after the renewal (queued behind it for the one connection).
  const deleted = db('domains').where({ id }).delete();
  release();
  await held;
  await deleted;
  t.is(queries, 2, 'one renewal however many hits came meanwhile');

  // Past the first answer's expiry: the renewal's answer, no query (it was asked less than a TTL ago).
  await sleep(started + ttl + 50 - Date.now());
  t.deepEqual(await hosts.lookup('links.renew.test'), [{ id, team_id: team.id }]);
  t.is(queries, 2, 'renewed: no query at the old expiry');

  // Left alone past its TTL: asked again (and the deleted domain is gone).
  await sleep(ttl + 50);
  t.deepEqual(await hosts.lookup('links.renew.test'), []);
  t.is(queries, 3);
});
