import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createTestDatabase } from '../test/helpers/db.ts';
import { newId } from '../shared/ids.ts';
const N = 1_000_000;
const d = await createTestDatabase();
const c = new pg.Client({ connectionString: d.url }); await c.connect();
const team = newId();
await c.query(`insert into teams (id, name, slug) values ($1, 't', 't-x')`, [team]);
const lines: string[] = ['email,first_name,last_name'];
for (let i = 0; i < N; i++) lines.push(`u${i}@d${i % 97}.bench.test,Ann,Lee${i % 1000}`);
const csv = Buffer.from(lines.join('\n') + '\n');
async function time(name: string, f: () => Promise<unknown>) { const t = performance.now(); await f(); console.log(name, Math.round(performance.now() - t), 'ms'); }
try {
  await c.query('create table bare (email text, first_name text, last_name text)');
  await time('COPY bare', () => pipeline(Readable.from([csv]), c.query(copyFrom('copy bare from stdin with (format csv, header true)'))));
  const ids: string[] = []; for (let i = 0; i < N; i++) ids.push(newId());
  const rowsTsv = Buffer.from(ids.map((id, i) => `${id}\t${team}\tu${i}@d${i % 97}.bench.test\tAnn\tLee${i % 1000}\n`).join(''));
  await time('COPY contacts (its indexes)', () => pipeline(Readable.from([rowsTsv]), c.query(copyFrom('copy contacts (id, team_id, email, first_name, last_name) from stdin'))));
  await c.query('delete from contacts'); await c.query('vacuum contacts');
  for (const B of [5000, 20000]) {
    await c.query('truncate contacts cascade');
    await time(`unnest insert batches of ${B}`, async () => {
      for (let s = 0; s < N; s += B) {
        const n = Math.min(B, N - s);
        const idA: string[] = [], em: string[] = [], fn: string[] = [], ln: string[] = [], un: (boolean|null)[] = [], pr: string[] = [];
        for (let i = s; i < s + n; i++) { idA.push(ids[i]); em.push(`u${i}@d${i % 97}.bench.test`); fn.push('Ann'); ln.push(`Lee${i % 1000}`); un.push(null); pr.push('{}'); }
        await c.query('begin');
        await c.query(`insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, properties)
          select i.id, $1, i.email, i.first_name, i.last_name, coalesce(i.unsubscribed, false), i.properties::jsonb from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::text[]) as i(id, email, first_name, last_name, unsubscribed, properties)
          on conflict (team_id, lower(email)) do nothing returning id, lower(email) as l`, [team, idA, em, fn, ln, un, pr]);
        await c.query('commit');
      }
    });
  }
  await c.query('truncate contacts cascade');
  await time('COPY into temp stage + insert select (batches of 20000)', async () => {
    await c.query('create temp table stage (id uuid, email text, first_name text, last_name text, unsubscribed boolean, properties jsonb) on commit delete rows');
    const B = 20000;
    for (let s = 0; s < N; s += B) {
      const n = Math.min(B, N - s);
      let tsv = '';
      for (let i = s; i < s + n; i++) tsv += `${ids[i]}\tu${i}@d${i % 97}.bench.test\tAnn\tLee${i % 1000}\t\\N\t{}\n`;
      await c.query('begin');
      await pipeline(Readable.from([tsv]), c.query(copyFrom('copy stage from stdin')));
      await c.query(`insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, properties)
        select id, $1, email, first_name, last_name, coalesce(unsubscribed, false), properties from stage
        on conflict (team_id, lower(email)) do nothing returning id, lower(email) as l`, [team]);
      await c.query('commit');
    }
  });
} finally { await c.end(); await d.drop(); }
