// The lease (mta/delivery/lease.ts) finds an email's recipients by the email alone, whatever the statistics say. A
// broadcast makes a hundred thousand recipients pending at once, faster than statistics follow (and not at all where
// autovacuum is off). With the due-and-free test written as plain conditions, the planner ANDed the bitmap of
// email_recipients_pending in, and a bitmap scan of that index walks every pending recipient of every email, the
// dead ones too until a vacuum: each lease cost more as the broadcast went on, and stayed dear after it
// (bench/README.md, the broadcasts suite).
import test from 'ava';
import knexFactory from 'knex';
import { createTestDatabase } from './helpers/db.ts';
import { TAKE_LEASES_SQL } from '../mta/delivery/lease.ts';
import { newId } from '../shared/ids.ts';

/** `n` one-recipient emails of `team` whose recipients have `status`, in two statements. */
async function emails(db: knexFactory.Knex, team: string, n: number, status: string): Promise<void> {
  await db.raw(
    `insert into emails (id, team_id, source, "from", from_address, "to", message_id, status, last_event)
     select gen_random_uuid(), ?, 'api', 'a@plan.test', 'a@plan.test', array['r' || i || '@plan.test'], 'm' || i, ?, 'sent'
     from generate_series(1, ?) i`,
    [team, status === 'delivered' ? 'done' : 'queued', n],
  );
  await db.raw(
    `insert into email_recipients (id, email_id, team_id, address, domain, kind, status)
     select gen_random_uuid(), e.id, e.team_id, e."to"[1], 'plan.test', 'to', ?
     from emails e where not exists (select 1 from email_recipients r where r.email_id = e.id)`,
    [status],
  );
}

test('the lease reads the email by its index when many recipients are pending and the statistics have not seen them', async (t) => {
  const database = await createTestDatabase();
  const db = knexFactory({ client: 'pg', connection: database.url, pool: { min: 1, max: 1 } });
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  const team = newId();
  // Statistics taken while little is pending; then a broadcast's worth turns pending, unseen by them.
  await emails(db, team, 20_000, 'delivered');
  await db.raw('analyze email_recipients');
  await emails(db, team, 20_000, 'queued');
  const targets = (await db('emails').where({ team_id: team, status: 'queued' }).limit(3).select('id')).map(
    (e: { id: string }) => e.id as string,
  );
  const now = new Date().toISOString();
  const token = new Date(Date.now() + 30_000).toISOString();
  const array = (values: string[]) => `{${values.map((v) => `"${v}"`).join(',')}}`;
  // The one statement of every lease, for one job (takeLease) and for three together (createLeaseGroup).
  const statements = [1, 3].map((n) => {
    const jobs = targets.slice(0, n);
    return {
      name: n === 1 ? 'one job (takeLease)' : `${n} jobs in one statement (createLeaseGroup)`,
      sql: TAKE_LEASES_SQL,
      types: 'timestamptz[], uuid[], timestamptz[]',
      leased: n,
      args: [array(jobs.map(() => token)), array(jobs), array(jobs.map(() => now))].map((a) => `'${a}'`).join(', '),
    };
  });

  for (const statement of statements)
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      const what = `${statement.name}, ${mode}`;
      await db
        .transaction(async (trx) => {
          await trx.raw(`set local plan_cache_mode = ${mode}`);
          await trx.raw(`prepare lease_plan (${statement.types}) as ${statement.sql}`);
          const [
            {
              'QUERY PLAN': [plan],
            },
          ] = (await trx.raw(`explain (analyze, buffers, format json) execute lease_plan(${statement.args})`)).rows;
          await trx.raw('deallocate lease_plan');
          const update = findNode(
            plan.Plan,
            (n) => n['Node Type'] === 'ModifyTable' && n['Relation Name'] === 'email_recipients',
          );
          t.deepEqual(
            indexesOf(update),
            ['email_recipients_email_id_address_unique'],
            `${what}: the email's index only`,
          );
          t.is(update?.['Actual Rows'], statement.leased, `${what}: each email's one recipient is leased`);
          t.true(
            Number(update?.['Shared Hit Blocks'] ?? Infinity) < 40 * statement.leased,
            `${what}: a few pages read, not the pending index`,
          );
          throw rollback; // the explained update is undone: the next mode leases the same recipients
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
    }
});

const rollback = new Error('rollback');

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

function findNode(node: PlanNode, match: (n: PlanNode) => boolean): PlanNode | undefined {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = findNode(child, match);
    if (found) return found;
  }
  return undefined;
}

function indexesOf(node: PlanNode | undefined): string[] {
  if (!node) return [];
  const own = typeof node['Index Name'] === 'string' ? [node['Index Name']] : [];
  return [...new Set([...own, ...(node.Plans ?? []).flatMap(indexesOf)])];
}
