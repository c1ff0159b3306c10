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
const ids: string[] = []; for (let i = 0; i < N; i++) ids.push(newId());
const line = (i: number, full: boolean) => full ? `${ids[i]}\t${team}\tu${i}@d${i % 97}.bench.test\tAnn\tLee${i % 1000}\tf\t{}\n` : `${ids[i]}\t${team}\tu${i}@d${i % 97}.bench.test\tAnn\tLee${i % 1000}\n`;
async function time(name: string, f: () => Promise<unknown>) { const t = performance.now(); await f(); console.log(name.padEnd(40), Math.round(performance.now() - t), 'ms'); }
try {
  for (const [name, full, B] of [['one COPY, 5 cols', false, N], ['one COPY, 7 cols', true, N], ['batches of 5000 + savepoint, 7 cols', true, 5000], ['one COPY, 5 cols (again)', false, N]] as const) {
    await c.query('truncate contacts cascade');
    await time(name, async () => {
      for (let s = 0; s < N; s += B) {
        let text = ''; for (let i = s; i < Math.min(N, s + B); i++) text += line(i, full);
        await c.query('begin'); await c.query('set local synchronous_commit = off'); await c.query('savepoint x');
        await pipeline(Readable.from([text]), c.query(copyFrom(full ? 'copy contacts (id, team_id, email, first_name, last_name, unsubscribed, properties) from stdin' : 'copy contacts (id, team_id, email, first_name, last_name) from stdin')));
        await c.query('release savepoint x'); await c.query('commit');
      }
    });
  }
} finally { await c.end(); await d.drop(); }
