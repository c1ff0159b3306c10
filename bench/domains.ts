// The domains suite of `npm run bench` (see bench/README.md): creating a domain through the real api (its own
// process, DNS pointed at a loopback DNS server) with the DKIM key pool filled as the worker keeps it and with
// it empty, then the worker's verification sweep over many domains whose records are all published.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../shared/config.ts';
import { createDb, type Db } from '../shared/db/knex.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { setRateLimit } from '../shared/teams/teams.ts';
import { fillPool, generateRsaKey } from '../shared/domains/dkim.ts';
import { newId } from '../shared/ids.ts';
import { secretsKey } from '../shared/secrets.ts';
import { fqdn } from '../shared/domains/names.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { createResolver, type DnsResolver } from '../shared/dns/resolver.ts';
import { sweepDomains } from '../worker/domains.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startDnsServer, type DnsServer } from '../test/helpers/dns-server.ts';
import { startServer, type ChildServer } from './servers.ts';
import { startWindow } from './proc.ts';
import { USER_AGENT } from './load.ts';
import { fixed, renderTable, type Cell } from './table.ts';

export interface DomainBenchOptions {
  /** Domains created per creation run. */
  creations: number;
  /** Domains the verification sweep checks. */
  verifications: number;
  redisUrl: string;
  /** Registers a cleanup step with the caller, which runs it even after a failure or a signal. */
  onCleanup(step: () => Promise<unknown>): void;
}

/** The budget for creating a domain, key generation included, at the median. */
export const CREATE_P50_BUDGET_MS = 150;
/** The sweep's lanes (worker/domains.ts PARALLEL), for the per-domain timing pass. */
const LANES = 8;

interface CreationRow {
  label: string;
  concurrency: number;
  n: number;
  p50: number;
  p99: number;
  perSecond: number;
  inlineKeys: number;
  /** CPU time of the api process per domain, and the whole machine's CPU use during the run (% of one core). */
  apiCpuMs?: number;
  machineCpuPercent?: number;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Runs `n` tasks on `width` lanes; answers each task's duration in ms and the wall time. */
async function timed(
  n: number,
  width: number,
  task: (i: number) => Promise<void>,
): Promise<{ ms: number[]; wallMs: number }> {
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await task(i);
      ms.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, lane));
  return { ms: ms.sort((a, b) => a - b), wallMs: performance.now() - started };
}

const poolSize = async (db: Db) => Number((await db('dkim_key_pool').count({ n: '*' }))[0].n);

async function createRun(
  db: Db,
  api: ChildServer,
  key: string,
  label: string,
  n: number,
  concurrency: number,
): Promise<CreationRow> {
  const before = await poolSize(db);
  const window = startWindow(api.pid);
  const tag = randomBytes(3).toString('hex');
  const { ms, wallMs } = await timed(n, concurrency, async (i) => {
    const res = await fetch(`${api.url}/domains`, {
      method: 'POST',
      headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-${tag}-${i}.test` }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /domains answered ${res.status}: ${text}`);
  });
  const cpu = window.end();
  const taken = before - (await poolSize(db));
  return {
    label,
    concurrency,
    n,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    perSecond: n / (wallMs / 1000),
    inlineKeys: n - taken,
    apiCpuMs: cpu.cpuPercent === undefined ? undefined : ((cpu.cpuPercent / 100) * wallMs) / n,
    machineCpuPercent: cpu.machineCpuPercent,
  };
}

/** Publishes every record of every customer domain in the loopback DNS server, as each customer would. */
async function publishAll(db: Db, dns: DnsServer): Promise<number> {
  const rows = await db('domain_records as r')
    .join('domains as d', 'd.id', 'r.domain_id')
    .where('d.managed', false)
    .select('d.name as domain', 'r.name', 'r.type', 'r.value', 'r.priority');
  for (const r of rows) {
    const name = fqdn(r.name, r.domain);
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority }]);
    else if (r.type === 'TXT') dns.set(name, 'TXT', [r.value]);
    else if (r.type === 'CNAME') dns.set(name, 'CNAME', [r.value]);
  }
  return rows.length;
}

/** Makes every customer domain look just added: unchecked records, due now. Each pass does a first check. */
async function resetChecks(db: Db): Promise<void> {
  const now = new Date();
  const ids = db('domains').select('id').where({ managed: false });
  await db('domain_records')
    .whereIn('domain_id', ids)
    .update({ status: 'not_started', found: null, last_checked_at: null });
  await db('domains').where({ managed: false }).update({
    status: 'not_started',
    checking_since: now,
    next_check_at: now,
    check_count: 0,
    verified_at: null,
    last_checked_at: null,
  });
}

/** The suite's world: a fresh database, a loopback DNS server, a team with a key and the real api process. */
async function startDomainWorld(o: DomainBenchOptions) {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-domains-'));
  o.onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const dns = await startDnsServer();
  o.onCleanup(() => dns.close());
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: `pwbench-${randomBytes(5).toString('hex')}`,
    BLOB_DIR: blobDir,
    RATE_LIMIT_RPS: '100000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    DNS_SERVERS: dns.address,
    // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
    RESERVED_TLDS_ALLOWED: 'test',
  };
  const config = loadConfig(env);
  const secrets = secretsKey(config);
  const db = createDb(config, { min: 0, max: 10 });
  o.onCleanup(() => db.destroy());

  const { team, api_key: key } = await createTeamWithKey(db, 'Bench domains');
  await setRateLimit(db, team.id, 100_000);
  const api = await startServer('api (domains)', 'api/main.ts', env);
  o.onCleanup(() => api.stop());
  return { config, secrets, db, dns, api, key };
}

type DomainWorld = Awaited<ReturnType<typeof startDomainWorld>>;

/** Creation, `n` domains a run: the pool filled by fillPool (the worker's own refill) before each run, then empty. */
async function creationRuns(w: DomainWorld, n: number) {
  const rows: CreationRow[] = [];
  let fillMs = 0;
  let filledKeys = 0;
  for (const concurrency of [1, 4]) {
    const t0 = performance.now();
    filledKeys += await fillPool(w.db, w.secrets, n);
    fillMs += performance.now() - t0;
    console.error(`bench: POST /domains x${n}, concurrency ${concurrency}, key pool filled`);
    rows.push(await createRun(w.db, w.api, w.key, 'key pool filled', n, concurrency));
  }
  for (const concurrency of [1, 4]) {
    await w.db('dkim_key_pool').delete();
    console.error(`bench: POST /domains x${n}, concurrency ${concurrency}, key pool empty`);
    rows.push(await createRun(w.db, w.api, w.key, 'key pool empty (inline RSA)', n, concurrency));
  }
  return { rows, fillMs, filledKeys };
}

/**
 * M fresh domains with every record published; answers the records published. One key fills the pool M times
 * over: the sweep compares published values and does not care that the keys repeat, and it spares M RSA
 * generations.
 */
async function publishedDomains(w: DomainWorld, m: number): Promise<number> {
  await w.db('domains').where({ managed: false }).delete();
  const one = await generateRsaKey(w.secrets);
  await w.db('dkim_key_pool').delete();
  await w.db.batchInsert(
    'dkim_key_pool',
    Array.from({ length: m }, () => ({ id: newId(), ...one })),
    500,
  );
  console.error(`bench: creating ${m} domains to verify`);
  await createRun(w.db, w.api, w.key, 'setup', m, 4);
  return publishAll(w.db, w.dns);
}

const verifiedCount = async (db: Db) =>
  Number((await db('domains').where({ managed: false, status: 'verified' }).count({ n: '*' }))[0].n);

/** TCP queries among the DNS server's queries from `from` on. */
const tcpQueries = (dns: DnsServer, from: number) =>
  dns.queries.slice(from).filter((q) => q.transport === 'tcp').length;

/** The worker's sweep, called back to back until no domain is due; its table row, and what it checked. */
async function sweepRun(w: DomainWorld, resolver: DnsResolver, log: Logger) {
  await resetChecks(w.db);
  w.dns.queries.length = 0;
  const t0 = performance.now();
  let swept = 0;
  for (
    let batch = await sweepDomains(w.db, resolver, w.config, log);
    batch > 0;
    batch = await sweepDomains(w.db, resolver, w.config, log)
  )
    swept += batch;
  const sweepMs = performance.now() - t0;
  const verified = await verifiedCount(w.db);
  const row = [
    `sweepDomains (the worker's)`,
    '8',
    swept,
    fixed(sweepMs / 1000, 2),
    fixed(swept / (sweepMs / 1000), 0),
    '-',
    '-',
    verified,
    `${w.dns.queries.length} (${tcpQueries(w.dns, 0)})`,
  ];
  return { swept, verified, row };
}

/** Per domain: the same first check, timed one by one, alone and on as many lanes as the sweep runs. */
async function perDomainRuns(w: DomainWorld, resolver: DnsResolver) {
  const rows = [];
  for (const lanes of [1, LANES]) {
    await resetChecks(w.db);
    const ids = (await w.db('domains').where({ managed: false }).select('id')).map((r: { id: string }) => r.id);
    const from = w.dns.queries.length;
    const run = await timed(ids.length, lanes, async (i) => void (await checkDomain(w.db, resolver, w.config, ids[i])));
    rows.push([
      `checkDomain, timed each`,
      lanes,
      ids.length,
      fixed(run.wallMs / 1000, 2),
      fixed(ids.length / (run.wallMs / 1000), 0),
      fixed(percentile(run.ms, 50), 1),
      fixed(percentile(run.ms, 99), 1),
      await verifiedCount(w.db),
      `${w.dns.queries.length - from} (${tcpQueries(w.dns, from)})`,
    ]);
  }
  return rows;
}

function printCreation(n: number, c: Awaited<ReturnType<typeof creationRuns>>): void {
  console.log('');
  console.log(`domains: POST /domains through the api (its own process, DNS on loopback), ${n} per run`);
  console.log('');
  console.log(
    renderTable(
      [
        'case',
        'concurrency',
        'domains',
        'p50 ms',
        'p99 ms',
        'domains/s',
        'keys made inline',
        'api CPU ms/domain',
        'machine CPU %',
      ],
      c.rows.map((r) => [
        r.label,
        r.concurrency,
        r.n,
        fixed(r.p50, 1),
        fixed(r.p99, 1),
        fixed(r.perSecond, 1),
        r.inlineKeys,
        fixed(r.apiCpuMs, 1),
        fixed(r.machineCpuPercent, 0),
      ]),
    ),
  );
  console.log(
    `(the worker's fillPool made ${c.filledKeys} keys, ${fixed(c.fillMs / c.filledKeys, 0)} ms each on average)`,
  );
}

function printVerification(m: number, published: number, rows: Cell[][]): void {
  console.log('');
  console.log(`verification: ${m} domains, ${published} records all published in the loopback DNS server`);
  console.log('');
  console.log(
    renderTable(
      ['run', 'lanes', 'domains', 'wall s', 'domains/s', 'p50 ms', 'p99 ms', 'verified', 'DNS queries (tcp)'],
      rows,
    ),
  );
  console.log("(p50/p99: one domain's whole check, lookups and transaction; the sweep is timed as a whole only)");
}

/** The budget for creation with a filled pool, and every domain verified by the sweep; a dry pool only warns. */
function verdict(rows: CreationRow[], m: number, sweep: { swept: number; verified: number }): boolean {
  let ok = true;
  const filled = rows.find((r) => r.label === 'key pool filled' && r.concurrency === 1);
  if (filled && filled.p50 > CREATE_P50_BUDGET_MS) {
    ok = false;
    console.log(
      `FAIL domain creation with a filled pool: p50 ${filled.p50.toFixed(1)} ms is over the ${CREATE_P50_BUDGET_MS} ms budget`,
    );
  }
  for (const r of rows.filter((x) => x.label === 'key pool filled' && x.inlineKeys > 0)) {
    console.log(
      `WARNING ${r.label}, concurrency ${r.concurrency}: ${r.inlineKeys} keys were made inline; the pool ran dry`,
    );
  }
  if (sweep.swept !== m || sweep.verified !== m) {
    ok = false;
    console.log(`FAIL verification: ${sweep.swept} checked and ${sweep.verified} verified of ${m}`);
  }
  return ok;
}

export async function runDomainBench(o: DomainBenchOptions): Promise<boolean> {
  const w = await startDomainWorld(o);
  const creation = await creationRuns(w, o.creations);

  const m = o.verifications;
  const published = await publishedDomains(w, m);
  const resolver = createResolver({ servers: [w.dns.address] });
  const log = createLogger({ LOG_LEVEL: 'silent' }, 'bench');
  console.error(`bench: sweeping ${m} domains (${published} records) until none is due`);
  const sweep = await sweepRun(w, resolver, log);
  const perDomain = await perDomainRuns(w, resolver);

  printCreation(o.creations, creation);
  printVerification(m, published, [sweep.row, ...perDomain]);
  return verdict(creation.rows, m, sweep);
}
