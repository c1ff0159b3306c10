// The imports suite of `npm run bench` (bench/README.md, "The imports suite"; `BENCH_ONLY=imports` runs it alone):
// a CSV of BENCH_IMPORT_ROWS rows imported end to end (the upload through the real api until the real worker shows
// it completed) next to PostgreSQL's own COPY of the same file into a bare table in the same database, before and
// after; and the worker's peak RSS while it imports a file of BENCH_IMPORT_BIG_BYTES (50 MB). The two
// targets as PASS/FAIL lines.
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { newId } from '../shared/ids.ts';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { setRateLimit } from '../shared/teams/teams.ts';
import { createProperty } from '../shared/contacts/properties.ts';
import { createDb } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startServer } from './servers.ts';
import { spawnEntry } from './webhooks-world.ts';
import { startWindow, type WindowStats } from './proc.ts';
import { fixed, renderTable } from './table.ts';
import { USER_AGENT } from './load.ts';

export interface ImportBenchOptions {
  rows: number;
  bigBytes: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

/** The targets. */
export const COPY_RATIO_TARGET = 0.33;
export const WORKER_RSS_TARGET_MB = 300;

/** Writes `rows` lines made by `line` under `header` to `file`; answers its bytes. */
async function writeCsv(file: string, header: string, rows: number, line: (i: number) => string): Promise<number> {
  const out = createWriteStream(file);
  let chunk = `${header}\n`;
  for (let i = 0; i < rows; i++) {
    chunk += `${line(i)}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  out.end(chunk);
  await new Promise<void>((r) => out.once('finish', () => r()));
  return (await stat(file)).size;
}

/** COPY of the file into a fresh bare table (no index, no constraint): the ceiling. Answers seconds. */
async function copyCeiling(databaseUrl: string, file: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('drop table if exists copy_ceiling');
    await client.query('create table copy_ceiling (email text, first_name text, last_name text)');
    const started = performance.now();
    await pipeline(
      createReadStream(file),
      client.query(copyFrom('copy copy_ceiling from stdin with (format csv, header true)')),
    );
    const seconds = (performance.now() - started) / 1000;
    await client.query('drop table copy_ceiling');
    return seconds;
  } finally {
    await client.end();
  }
}

/**
 * COPY of the same rows into a table made like contacts (its indexes, the unique address index among them, and its
 * checks), ids and team given as the import gives them: what PostgreSQL itself needs to store these rows as contacts.
 */
async function copyContactsCeiling(databaseUrl: string, file: string, teamId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('drop table if exists copy_contacts');
    await client.query('create table copy_contacts (like contacts including all)');
    let carry = '';
    let header = false;
    const rows = new Transform({
      transform(chunk: Buffer, _e, done) {
        const lines = (carry + chunk.toString()).split('\n');
        carry = lines.pop() ?? '';
        let out = '';
        for (const line of lines) {
          if (!header) {
            header = true;
            continue;
          }
          out += `${newId()}\t${teamId}\t${line.replaceAll(',', '\t')}\n`;
        }
        done(null, out);
      },
    });
    const started = performance.now();
    await pipeline(
      createReadStream(file),
      rows,
      client.query(copyFrom('copy copy_contacts (id, team_id, email, first_name, last_name) from stdin')),
    );
    const seconds = (performance.now() - started) / 1000;
    await client.query('drop table copy_contacts');
    return seconds;
  } finally {
    await client.end();
  }
}

interface ImportRun {
  rows: number;
  bytes: number;
  seconds: number;
  /** From the request to the api's 201 (the file streamed to storage and checked). */
  uploadSeconds: number;
  worker: WindowStats;
  api: WindowStats;
  counts: Record<string, number>;
}

/** POST the file, then poll until the import completes; seconds from the request to its completed_at. */
async function importFile(
  url: string,
  key: string,
  file: string,
  fields: Record<string, string>,
  pids: { worker: number; api: number },
): Promise<ImportRun> {
  const bytes = (await stat(file)).size;
  const form = new FormData();
  form.append('file', await openAsBlob(file), path.basename(file));
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const worker = startWindow(pids.worker);
  const api = startWindow(pids.api);
  const started = Date.now();
  const headers = { 'user-agent': USER_AGENT, authorization: `Bearer ${key}` };
  const res = await fetch(`${url}/contacts/imports`, { method: 'POST', headers, body: form });
  const created = (await res.json()) as { id?: string };
  if (res.status !== 201 || !created.id) throw new Error(`import refused: ${res.status} ${JSON.stringify(created)}`);
  const uploadSeconds = (Date.now() - started) / 1000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const got = await fetch(`${url}/contacts/imports/${created.id}`, { headers });
    const body = (await got.json()) as { status: string; completed_at: string; counts: Record<string, number> };
    if (body.status === 'failed') throw new Error(`import failed: ${JSON.stringify(body)}`);
    if (body.status !== 'completed') continue;
    const seconds = (Date.parse(body.completed_at) - started) / 1000;
    const [w, a] = [worker.end(), api.end()];
    return { rows: body.counts.total, bytes, seconds, uploadSeconds, worker: w, api: a, counts: body.counts };
  }
}

async function world(o: ImportBenchOptions) {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-bench-imports-'));
  o.onCleanup(() => rm(dir, { recursive: true, force: true }));
  const redisPrefix = `pwbench-imports-${randomBytes(5).toString('hex')}`;
  o.onCleanup(async () => {
    const redis = createRedis({ REDIS_URL: o.redisUrl });
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: path.join(dir, 'blobs'),
    RATE_LIMIT_RPS: '100000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 2 });
  o.onCleanup(() => db.destroy());
  const created = await createTeamWithKey(db, 'Bench imports');
  await setRateLimit(db, created.team.id, 100_000);
  await createProperty(db, created.team.id, { key: 'plan', type: 'string' });
  await createProperty(db, created.team.id, { key: 'seats', type: 'number' });
  const api = await startServer('api (imports)', 'api/main.ts', env);
  o.onCleanup(() => api.stop());
  const worker = await spawnEntry('worker/main.ts', env, 'worker.started');
  o.onCleanup(() => worker.stop());
  return { databaseUrl: database.url, dir, key: created.api_key, teamId: created.team.id, api, worker };
}

/** The 50 MB file: wider rows with two properties, every address new. */
async function writeBigFile(file: string, bytes: number) {
  const perRow = 72;
  const rows = Math.floor((bytes - 40) / perRow);
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const written = await writeCsv(file, 'email,first_name,last_name,plan,seats', rows, (i) =>
    `big${pad(i, 8)}@w${i % 89}.bench.test,Firstname,Lastname${pad(i % 100000, 6)},pro-${pad(i % 1000, 4)},${i % 500}`.padEnd(
      perRow - 1,
      ' ',
    ),
  );
  return { rows, bytes: written };
}

interface Figures {
  rows: number;
  bytes: number;
  copyBefore: number;
  copyAfter: number;
  copyContacts: number;
  run: ImportRun;
  big: ImportRun;
}

const copyRow = (name: string, rows: number, seconds: number, vs: string) => [
  name,
  rows,
  fixed(seconds, 1),
  '-',
  fixed(rows / seconds, 0),
  vs,
  '-',
  '-',
  '-',
  '-',
];

function report(f: Figures): boolean {
  const copyRate = f.rows / Math.min(f.copyBefore, f.copyAfter);
  const mb = (b: number) => (b / 1048576).toFixed(1);
  console.log('');
  console.log(
    `imports: node ${process.version}, ${cpus().length} cores; ${f.rows} rows (${mb(f.bytes)} MB) and a ${mb(f.big.bytes)} MB file of ${f.big.rows} rows`,
  );
  console.log('');
  const header = ['run', 'rows', 's', 'upload s', 'rows/s', 'vs COPY', 'worker peak RSS MB', 'worker CPU %'];
  const rows = [
    copyRow('COPY into a bare table (before)', f.rows, f.copyBefore, '-'),
    copyRow('COPY into a bare table (after)', f.rows, f.copyAfter, '-'),
    copyRow('COPY into a table like contacts', f.rows, f.copyContacts, fixed(f.rows / f.copyContacts / copyRate, 2)),
    row('import, upload to completed', f.run, copyRate),
    row(`import of the ${mb(f.big.bytes)} MB file`, f.big, copyRate),
  ];
  console.log(renderTable([...header, 'api peak RSS MB', 'machine CPU %'], rows));
  console.log('');
  console.log(
    'vs COPY = rows/s / the faster bare COPY. CPU % is of one core; the machine is shared (bench/README.md).',
  );
  const importRate = f.run.rows / f.run.seconds;
  const ratio = importRate / copyRate;
  const rss = f.big.worker.peakRssMb ?? Number.NaN;
  const contactsRatio = importRate / (f.rows / f.copyContacts);
  console.log(`the import at ${contactsRatio.toFixed(2)}x the rows/s of COPY into a table like contacts`);
  const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  console.log(
    `${pass(ratio >= COPY_RATIO_TARGET)} import at ${ratio.toFixed(2)}x COPY's rows/s (target >= ${COPY_RATIO_TARGET})`,
  );
  console.log(
    `${pass(rss < WORKER_RSS_TARGET_MB)} worker peak RSS ${rss.toFixed(0)} MB for the 50 MB file (target < ${WORKER_RSS_TARGET_MB})`,
  );
  const bad = [f.run, f.big].filter((r) => r.counts.created !== r.rows || r.counts.failed !== 0);
  for (const r of bad) console.log(`FAIL an import did not create every row: ${JSON.stringify(r.counts)}`);
  return bad.length === 0;
}

export async function runImportBench(o: ImportBenchOptions): Promise<boolean> {
  const w = await world(o);
  const pids = { worker: w.worker.pid, api: w.api.pid };
  const file = path.join(w.dir, 'contacts.csv');
  console.error(`bench: imports: writing ${o.rows} rows`);
  const line = (i: number) => `u${i}@d${i % 97}.bench.test,Ann,Lee${i % 1000}`;
  const bytes = await writeCsv(file, 'email,first_name,last_name', o.rows, line);
  console.error('bench: imports: COPY, import, COPY, COPY like contacts');
  const copyBefore = await copyCeiling(w.databaseUrl, file);
  const run = await importFile(w.api.url, w.key, file, {}, pids);
  const copyAfter = await copyCeiling(w.databaseUrl, file);
  const copyContacts = await copyContactsCeiling(w.databaseUrl, file, w.teamId);
  const bigFile = path.join(w.dir, 'big.csv');
  const written = await writeBigFile(bigFile, o.bigBytes);
  console.error(`bench: imports: the ${(written.bytes / 1048576).toFixed(1)} MB file`);
  const columnMap = { properties: { plan: 'plan', seats: { column: 'seats', type: 'number' } } };
  const big = await importFile(w.api.url, w.key, bigFile, { column_map: JSON.stringify(columnMap) }, pids);
  return report({ rows: o.rows, bytes, copyBefore, copyAfter, copyContacts, run, big });
}

function row(name: string, r: ImportRun, copyRate: number) {
  const rate = r.rows / r.seconds;
  return [
    name,
    r.rows,
    fixed(r.seconds, 1),
    fixed(r.uploadSeconds, 1),
    fixed(rate, 0),
    fixed(rate / copyRate, 2),
    fixed(r.worker.peakRssMb, 0),
    fixed(r.worker.cpuPercent, 0),
    fixed(r.api.peakRssMb, 0),
    fixed(r.worker.machineCpuPercent, 0),
  ];
}
