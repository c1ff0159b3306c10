// One batch of an import against real PostgreSQL, where the end-to-end tests cannot aim: another writer inserting
// one of the batch's addresses while the batch's COPY runs. The COPY waits for that writer, fails on the unique
// index, is rolled back to its savepoint, and the batch is written again skipping (or, under upsert, updating) the
// address; nothing is lost or written twice, and the next batch of the run starts with the INSERT path.
import test from 'ava';
import type pg from 'pg';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { until } from './helpers/wait.ts';
import { newId } from '../shared/ids.ts';
import { writeBatch, type BatchRow, type WriteMode } from '../shared/imports/batch.ts';
import type { ImportRow } from '../shared/imports/store.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

function importOf(teamId: string, onConflict: 'skip' | 'upsert'): ImportRow {
  const map = {
    email: 0,
    first_name: 1,
    last_name: null,
    full_name: null,
    unsubscribed: null,
    subscription_status: null,
  };
  return {
    id: newId(),
    team_id: teamId,
    on_conflict: onConflict,
    segment_ids: [],
    topics: [],
    column_map: { ...map, properties: [] },
  } as unknown as ImportRow;
}

const rowsOf = (emails: string[]): BatchRow[] =>
  emails.map((email, i) => ({
    row: i + 2,
    result: { contact: { email, first_name: 'Imported', last_name: null, unsubscribed: null, properties: {} } },
  }));

for (const onConflict of ['skip', 'upsert'] as const) {
  test(`${onConflict}: an address another writer inserts during the COPY is ${onConflict === 'skip' ? 'skipped' : 'updated'}, the rest created once`, async (t) => {
    const team = await p.createTeam(`Race ${onConflict}`);
    const emails = Array.from({ length: 50 }, (_, i) => `race${i}@example.com`);
    const other = await p.db.transaction();
    await other('contacts').insert({ id: newId(), team_id: team.id, email: 'race25@example.com', first_name: 'Other' });
    const conn: pg.ClientBase = await p.db.client.acquireConnection();
    const mode: WriteMode = { copy: true };
    try {
      const writing = p.db.transaction(
        (trx) => writeBatch(trx, conn, importOf(team.id, onConflict), rowsOf(emails), 0, new Set(), mode),
        { connection: conn },
      );
      // The batch waits on the other writer's uncommitted row; then the other commits.
      await until(
        async () => {
          const { rows } = await p.db.raw(`select 1 from pg_stat_activity where pid = ? and wait_event_type = 'Lock'`, [
            (conn as unknown as { processID: number }).processID,
          ]);
          return rows.length > 0;
        },
        { what: 'the COPY waiting for the other writer' },
      );
      await other.commit();
      const out = await writing;
      t.is(out.created, 49);
      t.is(onConflict === 'skip' ? out.skipped : out.updated, 1);
      t.deepEqual(out.failures, []);
      t.false(mode.copy, 'the next batch of the run inserts instead of copying');
    } finally {
      if (!other.isCompleted()) await other.rollback();
      await p.db.client.releaseConnection(conn);
    }
    const stored = await p.db('contacts').where({ team_id: team.id }).orderBy('email').select('email', 'first_name');
    t.is(stored.length, 50, 'every address once');
    t.is(
      stored.find((c) => c.email === 'race25@example.com')!.first_name,
      onConflict === 'skip' ? 'Other' : 'Imported',
    );
  });
}

test('after a batch that met existing contacts, a batch without any goes back to COPY', async (t) => {
  const team = await p.createTeam('Mode');
  await p.db('contacts').insert({ id: newId(), team_id: team.id, email: 'old@example.com' });
  const imp = importOf(team.id, 'skip');
  const mode: WriteMode = { copy: true };
  const conn: pg.ClientBase = await p.db.client.acquireConnection();
  try {
    const batch = (emails: string[]) =>
      p.db.transaction((trx) => writeBatch(trx, conn, imp, rowsOf(emails), 0, new Set(), mode), { connection: conn });
    t.like(await batch(['a@example.com', 'old@example.com']), { created: 1, skipped: 1 });
    t.false(mode.copy);
    t.like(await batch(['b@example.com', 'c@example.com']), { created: 2, skipped: 0 });
    t.true(mode.copy, 'no conflict: COPY again');
    t.like(await batch(['d@example.com']), { created: 1 });
  } finally {
    await p.db.client.releaseConnection(conn);
  }
  t.is(Number((await p.db('contacts').where({ team_id: team.id }).count({ n: '*' }).first())!.n), 5);
});
