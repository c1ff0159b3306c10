// Team deletion: `confirm` must be the team's name; scheduled stops sending and receiving at once and can be
// canceled; the nightly retention job, run with a clock moved past the 30 days, erases every row of every table with
// a team_id, the blobs they named and the team's Redis keys, and nothing of another team. A table added later that
// holds team data without a team_id (and without a cascading foreign key to one that has it) fails this test.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { makeUser, signIn } from './helpers/accounts.ts';
import { fixtures, operationFixtures } from './helpers/fixtures.ts';
import { runRetention } from '../worker/retention.ts';
import { blobColumns, teamTables } from '../shared/teams/tables.ts';
import { buildPendingExports } from '../shared/teams/export.ts';
import { redisKey } from '../shared/redis.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { closeDeliveryDeps, createDeliveryDeps } from '../mta/delivery/deps.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

let n = 0;
/** A team made through the API with an admin signed in and its key. */
async function teamWithAdmin(name = `Doomed ${++n}`) {
  const email = `admin${n}-${Date.now()}@people.test`;
  await makeUser(p.db, email);
  const c = await signIn(p.url, email);
  const created = await c.request('POST', '/teams', { body: { name, api_key: true } });
  return { c, email, team: { id: created.body.id, key: created.body.api_key.token } as TestTeam, name };
}

const retention = (now: Date) =>
  runRetention({ db: p.db, blobs: p.deps.blobs, redis: p.redis, config: p.config, log: p.deps.log }, now);
const DAY = 86_400_000;

/** The mta's deliver job for one email, in this process (the simulator needs no network). */
async function deliver(emailId: string) {
  const deps = createDeliveryDeps(p.config, { db: p.db, blobs: p.deps.blobs, log: p.deps.log }, { signingThreads: 0 });
  try {
    await processDelivery(deps, emailId);
  } finally {
    await closeDeliveryDeps(deps);
  }
}

test.serial(
  'a wrong confirm, or a member asking, changes nothing; scheduled stops sending and receiving; cancel resumes',
  async (t) => {
    const admin = await teamWithAdmin();
    const { team, name } = admin;
    let c = admin.c;
    const managed = (await p.request('GET', '/domains', { key: team.key })).body.data[0].name;
    const send = () =>
      p.request('POST', '/emails', {
        key: team.key,
        body: { from: `a@${managed}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'x', text: 'x' },
      });
    t.is((await send()).status, 200);
    for (const confirm of ['', name.toUpperCase(), `${name} `, 'x'.repeat(201)]) {
      const wrong = await c.request('POST', `/teams/${team.id}/deletion`, { body: { confirm } });
      t.is(wrong.status, 422, JSON.stringify(confirm));
      t.is(wrong.body.errors[0].path, 'confirm');
    }
    const email = `member${n}-${Date.now()}@people.test`;
    const user = await makeUser(p.db, email);
    await p.db('team_members').insert({ id: randomUUID(), team_id: team.id, user_id: user.id, role: 'member' });
    const member = await signIn(p.url, email);
    t.is((await member.request('POST', `/teams/${team.id}/deletion`, { body: { confirm: name } })).status, 403);
    t.like((await c.request('GET', `/teams/${team.id}/deletion`)).body, { status: 'none', requested_at: null });

    // Accepted before the request, not delivered yet: it waits while the deletion is scheduled.
    const waiting = (await send()).body.id;
    const scheduled = await c.request('POST', `/teams/${team.id}/deletion`, { body: { confirm: name } });
    t.is(scheduled.status, 200, scheduled.text);
    t.like(scheduled.body, { object: 'team_deletion', team_id: team.id, status: 'scheduled' });
    const window = Date.parse(scheduled.body.purge_after) - Date.parse(scheduled.body.requested_at);
    t.is(window, 30 * DAY);
    const refused = await send();
    t.is(refused.status, 403, refused.text);
    t.regex(refused.body.message, /scheduled for deletion/);
    await deliver(waiting);
    t.is((await p.db('emails').where({ id: waiting }).first('status')).status, 'queued', 'the mta holds its mail');
    // A message to a receiving domain of the team, stored by the MX's store and run by the receive job (the fixture
    // expects its attachment kept, which a dropped message never has).
    await t.throwsAsync(fixtures.receiving(p, team), { message: /stored no attachment/ });
    const row = await p.db('received_emails').where({ team_id: team.id }).first('dropped_reason');
    t.is(row.dropped_reason, 'team_blocked', 'received mail is dropped');
    t.is((await c.request('GET', '/team')).body?.risk_state ?? 'no current team', 'no current team');
    // Inside the window the nightly job leaves it alone.
    await retention(new Date(Date.now() + 29 * DAY));
    t.truthy(await p.db('teams').where({ id: team.id }).first());
    // The moved clock ended every session too (their 14 days passed): sign in again.
    c = await signIn(p.url, admin.email);
    const canceled = await c.request('DELETE', `/teams/${team.id}/deletion`);
    t.like(canceled.body, { status: 'none', purge_after: null }, canceled.text);
    t.is((await send()).status, 200, 'sending resumes');
    await deliver(waiting);
    t.is(
      (await p.request('GET', `/emails/${waiting}`, { key: team.key })).body.last_event,
      'delivered',
      'the held mail goes',
    );
    t.is((await c.request('DELETE', `/teams/${team.id}/deletion`)).status, 422, 'nothing to cancel');
  },
);

/** Data of the team in every area the fixtures know, plus members, an invitation, an export and a Redis key. */
async function fill(team: TestTeam, c: Awaited<ReturnType<typeof teamWithAdmin>>['c']) {
  for (const make of Object.values(fixtures)) await make(p, team);
  for (const id of [
    'getEmailAttachment',
    'getEmailAttempt',
    'getDomainBrandLogo',
    'addContactToSegment',
    'getDomainClaim',
  ])
    await operationFixtures[id](p, team);
  await c.request('POST', `/teams/${team.id}/invitations`, { body: { email: 'someone@people.test', role: 'viewer' } });
  await c.request('POST', `/teams/${team.id}/exports`, { body: {} });
  await buildPendingExports({ db: p.db, blobs: p.deps.blobs, config: p.config, log: p.deps.log });
  await p.redis.set(redisKey(p.config, 'rl', team.id, 'probe'), '1');
}

async function rowsOf(teamId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await teamTables(p.db))
    out[table] = Number((await p.db(table).where({ team_id: teamId }).count({ n: '*' }))[0].n);
  return out;
}

async function blobKeysOf(teamId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const table of await teamTables(p.db))
    for (const column of await blobColumns(p.db, table))
      keys.push(...(await p.db(table).where({ team_id: teamId }).whereNotNull(column).pluck(column)));
  return keys;
}

test.serial(
  '30 days after the request the retention job erases every row, blob and Redis key of the team, and no other',
  async (t) => {
    t.timeout(120_000);
    const doomed = await teamWithAdmin();
    const kept = await teamWithAdmin();
    await fill(doomed.team, doomed.c);
    await fill(kept.team, kept.c);
    const before = await rowsOf(doomed.team.id);
    const filled = Object.entries(before)
      .filter(([, count]) => count > 0)
      .map(([table]) => table);
    t.true(filled.length >= 25, `rows in ${filled.length} tables: ${filled.join(', ')}`);
    const blobs = await blobKeysOf(doomed.team.id);
    t.true(blobs.length >= 4, `blobs: ${blobs.join(', ')}`);
    const keptRows = await rowsOf(kept.team.id);
    const keptBlobs = await blobKeysOf(kept.team.id);

    await doomed.c.request('POST', `/teams/${doomed.team.id}/deletion`, { body: { confirm: doomed.name } });
    const done = await retention(new Date(Date.now() + 31 * DAY));
    t.true(done.teams_erased >= 1);
    t.falsy(await p.db('teams').where({ id: doomed.team.id }).first(), 'the team row is gone');
    const after = await rowsOf(doomed.team.id);
    t.deepEqual(
      Object.entries(after).filter(([, count]) => count > 0),
      [],
      'no table keeps a row of the team',
    );
    for (const key of blobs) t.is(await p.deps.blobs.get(key), null, `blob ${key}`);
    t.deepEqual(await p.redis.keys(redisKey(p.config, `*${doomed.team.id}*`)), []);
    t.is(
      Number(
        (
          await p
            .db('webhook_attempts as a')
            .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
            .where({ 'd.team_id': doomed.team.id })
            .count({ n: '*' })
        )[0].n,
      ),
      0,
    );
    // The admin's account stays (it may have other teams); its membership and the team's sessions' hold went.
    const again = await signIn(p.url, doomed.email);
    t.is((await again.request('GET', '/me')).body.teams.length, 0);
    // The other team is whole.
    t.deepEqual(await rowsOf(kept.team.id), keptRows);
    // (Its export archive expired: the clock moved past its 7 days as well.)
    for (const key of keptBlobs.filter((k) => !k.startsWith('exports/')))
      t.not(await p.deps.blobs.get(key), null, `the other team's blob ${key}`);
    t.is((await p.request('GET', '/team', { key: kept.team.key })).status, 200);
    t.is((await p.request('GET', '/team', { key: doomed.team.key })).status, 403, "the erased team's key is gone");
  },
);

/** Tables that hold no team's data by design: the platform's own, and people's accounts (not a team's). */
const NOT_TEAM_DATA = new Set([
  'knex_migrations',
  'knex_migrations_lock',
  'dkim_key_pool',
  'platform_dkim_keys',
  'webhook_fanout_cursor',
  'email_metrics_cursor',
  'teams',
  'users',
  'account_tokens',
  'sessions',
  'mfa_challenges',
  'mfa_recovery_codes',
  // The OAuth server's signing keys (the platform's), and oidc-provider's store: clients, a person's sessions and
  // interactions are not a team's; the codes and tokens of a team's grants are erased with it
  // (shared/teams/deletion.ts, tested below).
  'oauth_signing_keys',
  'oauth_models',
]);

test("erasing a team removes its OAuth grants' codes and tokens, and leaves another team's", async (t) => {
  const doomed = await teamWithAdmin();
  const kept = await teamWithAdmin();
  const user = await p.db('users').where({ email: doomed.email }).first();
  const grant = async (teamId: string, providerId: string) => {
    await p.db('oauth_grants').insert({
      id: randomUUID(),
      provider_grant_id: providerId,
      team_id: teamId,
      user_id: user.id,
      client_id: 'client',
      scopes: ['emails:read'],
      resources: ['http://localhost/'],
    });
    await p.db('oauth_models').insert({
      model: 'AccessToken',
      id: `token-${providerId}`,
      payload: JSON.stringify({ grantId: providerId }),
      grant_id: providerId,
      expires_at: new Date(Date.now() + 3600_000),
    });
  };
  await grant(doomed.team.id, `g-doomed-${n}`);
  await grant(kept.team.id, `g-kept-${n}`);
  const scheduled = await doomed.c.request('POST', `/teams/${doomed.team.id}/deletion`, {
    body: { confirm: doomed.name },
  });
  t.is(scheduled.body.status, 'scheduled', scheduled.text);
  await retention(new Date(Date.now() + 31 * DAY));
  t.deepEqual(
    await p
      .db('oauth_models')
      .whereIn('id', [`token-g-doomed-${n}`, `token-g-kept-${n}`])
      .pluck('id'),
    [`token-g-kept-${n}`],
  );
  t.is((await p.db('oauth_grants').where({ team_id: doomed.team.id })).length, 0);
});

test('every table is covered: it has a team_id, cascades from a table that has one, or holds no team data', async (t) => {
  const { rows } = await p.db.raw(
    "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
  );
  const scoped = new Set(await teamTables(p.db));
  const { rows: cascades } = await p.db
    .raw(`select conrelid::regclass::text as child, confrelid::regclass::text as parent
    from pg_constraint where contype = 'f' and confdeltype = 'c' and connamespace = current_schema()::regnamespace`);
  for (const { name } of rows as { name: string }[]) {
    if (scoped.has(name) || NOT_TEAM_DATA.has(name)) continue;
    const parent = (cascades as { child: string; parent: string }[]).find(
      (c) => c.child === name && scoped.has(c.parent),
    );
    t.truthy(
      parent,
      `${name}: no team_id, no cascading foreign key to a team table, and not listed as holding no team data`,
    );
  }
});
