// Where an import's PostgreSQL time goes (bench/README.md, "The imports suite"): N rows (PROBE_ROWS, default 200,000)
// COPYed in transactions of 5,000 rows (as an import writes them) into tables made like contacts with parts of its
// schema left out, next to a bare COPY of the same rows, and two other ways of writing a batch (sorted by address;
// COPY into a temporary staging table, then one INSERT ... SELECT ... ON CONFLICT). `npx tsx
// bench/imports-schema-probe.ts`; a fresh database, dropped at the end.
import pg from 'pg';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { v7 } from 'uuid';
import { createTestDatabase } from '../test/helpers/db.ts';
import { createDb } from '../shared/db/knex.ts';
import { createTeam } from '../shared/teams/teams.ts';

const N = Number(process.env.PROBE_ROWS ?? 200_000);
const B = 5000;
const db0 = await createTestDatabase();
const knex = createDb({ DATABASE_URL: db0.url }, { min: 0, max: 2 });
const team = await createTeam(knex, { name: 'probe' });
const client = new pg.Client({ connectionString: db0.url });
await client.connect();
await client.query('set synchronous_commit = off');
const emails = Array.from({ length: N }, (_, i) => `u${i}@d${i % 97}.bench.test`);
const copy = (sql: string, text: string) => pipeline(Readable.from([text]), client.query(copyFrom(sql)));
const line = (e: string) => `${v7()}\t${team.id}\t${e}\tAnn\tLee\tf\t{}\n`;
const cols = '(id, team_id, email, first_name, last_name, unsubscribed, properties)';

const direct = (batch: string[]) => copy(`copy t ${cols} from stdin`, batch.map(line).join(''));
const sorted = (batch: string[]) => direct([...batch].sort());
async function staged(batch: string[]) {
  await client.query('create temp table if not exists stage (like contacts including defaults) on commit delete rows');
  await copy(`copy stage ${cols} from stdin`, batch.map(line).join(''));
  await client.query(`insert into t ${cols} select ${cols.slice(1, -1)} from stage
    on conflict (team_id, lower(email)) do nothing`);
}

async function bare() {
  await client.query('drop table if exists bare; create table bare (email text, first_name text, last_name text)');
  const t0 = performance.now();
  await copy('copy bare from stdin', emails.map((e) => `${e}\tAnn\tLee\n`).join(''));
  const s = (performance.now() - t0) / 1000;
  console.log(`bare table, one COPY: ${s.toFixed(2)} s, ${Math.round(N / s)} rows/s`);
}

async function run(name: string, setup: string, write = direct) {
  await client.query('drop table if exists t');
  await client.query(setup);
  const t0 = performance.now();
  for (let i = 0; i < N; i += B) {
    await client.query('begin');
    await write(emails.slice(i, i + B));
    await client.query('commit');
  }
  const s = (performance.now() - t0) / 1000;
  console.log(`${name}: ${s.toFixed(2)} s, ${Math.round(N / s)} rows/s`);
}
const idx = await client.query(
  "select indexname, indexdef from pg_indexes where tablename = 'contacts' order by indexname",
);
console.log(idx.rows.map((r) => r.indexdef).join('\n'));
const like = 'create table t (like contacts including all)';
for (let round = 0; round < 2; round++) {
  await bare();
  await run('like contacts', like);
  await run('like contacts, each batch sorted by address', like, sorted);
  await run('like contacts, staging table + INSERT ON CONFLICT', like, staged);
  await run('no index at all', 'create table t (like contacts including defaults including constraints)');
  await run(
    'pkey only',
    'create table t (like contacts including defaults including constraints); alter table t add primary key (id)',
  );
  await run(
    'pkey + unique lower(email)',
    `create table t (like contacts including defaults including constraints); alter table t add primary key (id);
    create unique index on t (team_id, lower(email))`,
  );
  await run('like contacts, unlogged', 'create unlogged table t (like contacts including all)');
}
await client.end();
await knex.destroy();
await db0.drop();
