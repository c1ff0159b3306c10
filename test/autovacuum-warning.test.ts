// The worker warns at start when the PostgreSQL server runs without autovacuum (shared/db/autovacuum.ts): nothing
// else vacuums the hot tables or refreshes their statistics then. The server's own setting decides; the CI machine's
// server runs with autovacuum off, so there the warning is what is tested.
import test from 'ava';
import knexFactory from 'knex';
import pino from 'pino';
import { adminUrl } from './helpers/db.ts';
import { warnIfAutovacuumOff } from '../shared/db/autovacuum.ts';

test('a warning names the setting exactly when the server runs without autovacuum', async (t) => {
  const db = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  t.teardown(() => db.destroy());
  const lines: { msg: string; docs?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  await warnIfAutovacuumOff(db, log);
  const settings = (
    await db.raw(`select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as counts`)
  ).rows[0];
  const off = settings.autovacuum !== 'on' || settings.counts !== 'on';
  t.deepEqual(
    lines.map((l) => l.msg),
    off ? ['postgres.autovacuum_off'] : [],
  );
  if (off) t.is(lines[0].docs, 'docs/capacity.md');
});
