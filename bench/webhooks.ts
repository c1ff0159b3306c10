// The webhooks suite of `npm run bench` (bench/README.md, "The webhooks suite"): the real worker process fanning
// events out and POSTing them to a loopback receiver, and the real api → mta → SMTP sink path producing
// `email.delivered` webhooks. Deliveries per second, the delay from an event's commit to its webhook, the
// worker's CPU per delivery; the two targets as PASS/FAIL lines.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { liftSandbox, setRateLimit } from '../shared/teams/teams.ts';
import { createEndpoint } from '../shared/webhooks/endpoints.ts';
import { secretsKey } from '../shared/secrets.ts';
import { loadConfig } from '../shared/config.ts';
import { newId } from '../shared/ids.ts';
import { startWindow } from './proc.ts';
import { fixed, renderTable, type Cell } from './table.ts';
import { USER_AGENT } from './load.ts';
import { RECIPIENT_DOMAIN, SENDER_DOMAIN } from './sending-ours.ts';
import { startWorld, type Arrival, type World } from './webhooks-world.ts';

export interface WebhookBenchOptions {
  /** Events of the many-endpoint backlog run. */
  events: number;
  /** Endpoints (one per team) of the many-endpoint runs. */
  endpoints: number;
  /** Events of the one-endpoint backlog run. */
  singleEvents: number;
  /** The steady run: events per second, for this many seconds. */
  rate: number;
  rateSeconds: number;
  /** Emails sent through api and mta, at this rate. */
  emails: number;
  emailRate: number;
  drainSeconds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

/** The targets. */
export const DELIVERIES_PER_SECOND_TARGET = 1000;
export const DELAY_P99_TARGET_MS = 1000;

interface Row {
  name: string;
  deliveries: number;
  arrived: number;
  wallMs: number;
  p50?: number;
  p99?: number;
  workerCpuMs?: number;
  workerCpuPercent?: number;
  machineCpuPercent?: number;
  outOfOrder: number;
  duplicates: number;
}

function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : undefined;
}

/** Delays (arrival − the event's created_at), per-endpoint order of `data.seq`, duplicate webhook-ids. */
function judge(arrivals: Arrival[]) {
  const delays = arrivals.map((a) => a.at - Date.parse(a.body.created_at)).sort((a, b) => a - b);
  const lastSeq = new Map<string, number>();
  let outOfOrder = 0;
  for (const a of arrivals) {
    const seq = a.body.data.seq;
    if (typeof seq !== 'number') continue;
    if ((lastSeq.get(a.endpoint) ?? -1) > seq) outOfOrder++;
    lastSeq.set(a.endpoint, seq);
  }
  return {
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    outOfOrder,
    duplicates: arrivals.length - new Set(arrivals.map((a) => a.id)).size,
  };
}

async function eventTeams(w: World, n: number, prefix: string): Promise<string[]> {
  const key = secretsKey(loadConfig(w.env));
  const teams: string[] = [];
  for (let i = 0; i < n; i++) {
    const { team } = await createTeamWithKey(w.db, `${prefix} ${i}`);
    await createEndpoint(
      w.db,
      key,
      team.id,
      { endpoint: `${w.receiver.url}/hook/${prefix}-${i}`, events: ['contact.updated'] },
      { allowHttp: true, allowPrivate: true },
    );
    teams.push(team.id);
  }
  return teams;
}

/** `count` contact.updated events, round robin over `teams`, `data.seq` counting up. */
function eventRows(teams: string[], count: number, from = 0) {
  return Array.from({ length: count }, (_, i) => ({
    id: newId(),
    team_id: teams[(from + i) % teams.length],
    type: 'contact.updated',
    data: JSON.stringify({ object: 'contact', id: newId(), seq: from + i }),
  }));
}

async function measured(
  w: World,
  name: string,
  expected: number,
  o: WebhookBenchOptions,
  load: () => Promise<void>,
): Promise<Row> {
  w.receiver.reset();
  const window = startWindow(w.worker.pid);
  const started = Date.now();
  await load();
  const complete = await w.receiver.waitFor(expected, o.drainSeconds * 1000);
  const wallMs = (complete ? w.receiver.arrivals[expected - 1].at : Date.now()) - started;
  const stats = window.end();
  if (!complete)
    console.error(
      `bench: webhooks: ${name}: ${w.receiver.arrivals.length} of ${expected} webhooks after ${o.drainSeconds} s`,
    );
  const arrivals = w.receiver.arrivals;
  const cpuMs = stats.cpuPercent === undefined ? undefined : (stats.cpuPercent / 100) * (Date.now() - started);
  return {
    name,
    deliveries: expected,
    arrived: arrivals.length,
    wallMs,
    ...judge(arrivals),
    workerCpuMs: cpuMs === undefined || arrivals.length === 0 ? undefined : cpuMs / arrivals.length,
    workerCpuPercent: stats.cpuPercent,
    machineCpuPercent: stats.machineCpuPercent,
  };
}

/** Every row of `events` committed in one transaction: the worker sees them all at once, at its commit. */
async function backlog(w: World, teams: string[], count: number): Promise<void> {
  const rows = eventRows(teams, count);
  await w.db.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 1000) await trx('events').insert(rows.slice(i, i + 1000));
  });
}

/** `rate` events a second for `seconds`, a small transaction every 20 ms. */
async function steady(w: World, teams: string[], rate: number, seconds: number): Promise<void> {
  const total = rate * seconds;
  const started = Date.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
    if (due > sent) {
      await w.db('events').insert(eventRows(teams, due - sent, sent));
      sent = due;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A team allowed to send from SENDER_DOMAIN to the sink, its endpoint subscribed to email.delivered. */
async function mailer(w: World): Promise<string> {
  const { team, api_key: key } = await createTeamWithKey(w.db, 'Bench mailer');
  await setRateLimit(w.db, team.id, 100_000);
  await liftSandbox(w.db, team.id, 'us-east-1');
  const res = await fetch(`${w.api.url}/domains`, {
    method: 'POST',
    headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: SENDER_DOMAIN, region: 'us-east-1' }),
  });
  const domain = (await res.json()) as {
    id: string;
    records: { type: string; name: string; value: string; priority?: number }[];
  };
  if (res.status !== 201) throw new Error(`POST /domains answered ${res.status}: ${JSON.stringify(domain)}`);
  // Published, so the worker's verification sweep keeps it verified; marked verified now rather than waiting for it.
  for (const r of domain.records) {
    const name = r.name === '@' ? SENDER_DOMAIN : `${r.name}.${SENDER_DOMAIN}`;
    if (r.type === 'MX') w.dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority ?? 10 }]);
    else if (r.type === 'TXT') w.dns.set(name, 'TXT', [r.value]);
  }
  await w.db('domains').where({ id: domain.id }).update({ status: 'verified', verified_at: new Date() });
  w.dns.set(RECIPIENT_DOMAIN, 'MX', [{ exchange: `mx.${RECIPIENT_DOMAIN}`, priority: 10 }]);
  w.dns.set(`mx.${RECIPIENT_DOMAIN}`, 'A', ['127.0.0.1']);
  await createEndpoint(
    w.db,
    secretsKey(loadConfig(w.env)),
    team.id,
    { endpoint: `${w.receiver.url}/hook/mail`, events: ['email.delivered'] },
    { allowHttp: true, allowPrivate: true },
  );
  return key;
}

/** `n` emails through POST /emails at `rate` a second (one recipient each), not waiting for one to send the next. */
async function sendEmails(w: World, key: string, n: number, rate: number): Promise<void> {
  const started = Date.now();
  const pending: Promise<void>[] = [];
  let refused = 0;
  for (let i = 0; i < n; i++) {
    const wait = started + (i * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      (async () => {
        const res = await fetch(`${w.api.url}/emails`, {
          method: 'POST',
          headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            from: `Bench <bench@${SENDER_DOMAIN}>`,
            to: [`hook-${i}@${RECIPIENT_DOMAIN}`],
            subject: `Webhook bench ${i}`,
            text: `Message ${i}.`,
          }),
        });
        const text = await res.text();
        if (res.status !== 200 && refused++ === 0)
          console.error(`bench: webhooks: POST /emails answered ${res.status} ${text.slice(0, 300)}`);
      })(),
    );
  }
  await Promise.all(pending);
  if (refused) console.error(`bench: webhooks: ${refused} of ${n} sends refused`);
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export async function runWebhookBench(o: WebhookBenchOptions): Promise<void> {
  const startLoad = loadavg();
  const w = await startWorld(o.redisUrl, o.onCleanup);
  const rows: Row[] = [];
  const one = await eventTeams(w, 1, 'single');
  const many = await eventTeams(w, o.endpoints, 'many');

  // Warm-up (not reported): JIT, the worker's connections, the receiver's kept-alive sockets.
  w.receiver.reset();
  await backlog(w, many, 40 * o.endpoints);
  await w.receiver.waitFor(40 * o.endpoints, o.drainSeconds * 1000);

  console.error(`bench: webhooks: backlog of ${o.singleEvents} events, 1 endpoint`);
  rows.push(await measured(w, `backlog, 1 endpoint`, o.singleEvents, o, () => backlog(w, one, o.singleEvents)));
  console.error(`bench: webhooks: backlog of ${o.events} events, ${o.endpoints} endpoints`);
  rows.push(await measured(w, `backlog, ${o.endpoints} endpoints`, o.events, o, () => backlog(w, many, o.events)));
  console.error(`bench: webhooks: ${o.rate} events/s for ${o.rateSeconds} s, ${o.endpoints} endpoints`);
  rows.push(
    await measured(w, `steady ${o.rate}/s, ${o.endpoints} endpoints`, o.rate * o.rateSeconds, o, () =>
      steady(w, many, o.rate, o.rateSeconds),
    ),
  );

  const key = await mailer(w);
  console.error(`bench: webhooks: ${o.emails} emails at ${o.emailRate}/s through api and mta`);
  rows.push(
    await measured(w, `email.delivered, ${o.emailRate} emails/s via mta`, o.emails, o, () =>
      sendEmails(w, key, o.emails, o.emailRate),
    ),
  );
  const delivered = w.sink.messages.length;

  console.log('');
  console.log(
    `Webhooks: the real worker (worker/main.ts) → a loopback receiver; node ${process.version}, ${cpus().length} cores; load average ${startLoad} at the start, ${loadavg()} at the end`,
  );
  console.log('');
  const rate = (r: Row) => (r.arrived / r.wallMs) * 1000;
  console.log(
    renderTable(
      [
        'run',
        'webhooks',
        'arrived',
        'wall s',
        'deliveries/s',
        'delay p50 ms',
        'delay p99 ms',
        'worker CPU ms/delivery',
        'worker CPU %',
        'machine CPU %',
        'out of order',
        'duplicates',
      ],
      rows.map((r): Cell[] => [
        r.name,
        r.deliveries,
        r.arrived,
        fixed(r.wallMs / 1000, 1),
        fixed(rate(r), 0),
        fixed(r.p50, 0),
        fixed(r.p99, 0),
        fixed(r.workerCpuMs, 2),
        fixed(r.workerCpuPercent, 0),
        fixed(r.machineCpuPercent, 0),
        r.outOfOrder,
        r.duplicates,
      ]),
    ),
  );
  console.log('');
  console.log(
    'Each endpoint has ONE request in flight at a time (strict per-endpoint order); the many-endpoint runs use',
  );
  console.log(
    `${o.endpoints} endpoints (one per team) on the one receiver process. backlog = every event committed in one transaction,`,
  );
  console.log(
    'timed from before that transaction to the last arrival; its delays are mostly queueing. delay = arrival at the',
  );
  console.log(
    "receiver − the event's created_at (the recording transaction's start, so the commit is inside it). The email run",
  );
  console.log(
    `sends through POST /emails → mta → loopback SMTP sink (${delivered} messages reached it); its delay is from the`,
  );
  console.log("recipient's delivered transaction to the email.delivered webhook. CPU % is of one core.");
  const throughput = rows[1];
  const mail = rows[3];
  const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  console.log('');
  console.log(
    `${pass(rate(throughput) >= DELIVERIES_PER_SECOND_TARGET && throughput.arrived === throughput.deliveries)} throughput: ${fixed(rate(throughput), 0)} deliveries/s to ${o.endpoints} endpoints (target ${DELIVERIES_PER_SECOND_TARGET}/s); one endpoint alone: ${fixed(rate(rows[0]), 0)}/s`,
  );
  console.log(
    `${pass(mail.p99 !== undefined && mail.p99 < DELAY_P99_TARGET_MS && mail.arrived === mail.deliveries)} delay: email.delivered p99 ${fixed(mail.p99, 0)} ms, p50 ${fixed(mail.p50, 0)} ms (target p99 < ${DELAY_P99_TARGET_MS} ms)`,
  );
  const broken = rows.filter((r) => r.outOfOrder || r.duplicates || r.arrived !== r.deliveries);
  for (const r of broken)
    console.log(
      `FAIL ${r.name}: ${r.arrived}/${r.deliveries} arrived, ${r.outOfOrder} out of order, ${r.duplicates} duplicates`,
    );
}
