import pg from 'pg';
import { createTestDatabase } from '../test/helpers/db.ts';
import { newId } from '../shared/ids.ts';
const d = await createTestDatabase();
const c = new pg.Client({ connectionString: d.url }); await c.connect();
try {
  const team = newId();
  await c.query(`insert into teams (id, name, slug) values ($1, 't', 't-x')`, [team]);
  await c.query(`insert into contacts (id, team_id, email) select gen_random_uuid(), $1, 'u' || i || '@d' || (i % 97) || '.bench.test' from generate_series(1, 200000) i`, [team]);
  const emails = Array.from({ length: 5000 }, (_, i) => `u${300000 + i}@d${i % 97}.bench.test`);
  for (const q of [
    'select id, lower(email) as l from contacts where team_id = $1 and lower(email) = any($2::text[])',
    'select c.id, x.l from unnest($2::text[]) x(l) join contacts c on c.team_id = $1 and lower(c.email) = x.l',
  ]) {
    const t = performance.now(); await c.query(q, [team, emails]); console.log(Math.round(performance.now() - t), 'ms');
    const e = await c.query('explain analyze ' + q, [team, emails]); console.log(e.rows.map((r: any) => r['QUERY PLAN']).join('\n'));
  }
  await c.query('analyze contacts');
  const q = 'select id, lower(email) as l from contacts where team_id = $1 and lower(email) = any($2::text[])';
  const t = performance.now(); await c.query(q, [team, emails]); console.log('after analyze', Math.round(performance.now() - t), 'ms');
} finally { await c.end(); await d.drop(); }
