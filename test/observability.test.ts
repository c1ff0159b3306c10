// Observability as an operator meets it: the api, mta, inbound and worker as production starts them, each serving
// Prometheus metrics on a port of its own (two chosen here, two picked by the kernel and read from the process's
// `metrics.listening` line). A send through the api is delivered by the mta to a loopback MX (DKIM-signed), its
// events reach a webhook endpoint through the worker, a scheduled send is released by the worker, and mail reaches
// the inbound MX; then each process's /metrics shows the series that moved, and the api's `request` line, the mta's
// `delivery.delivered` line and the worker's `webhook.delivered` and `email.released` lines carry the same request id.
import test, { type ExecutionContext } from 'ava';
import { publishRecords } from './helpers/domain-records.ts';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { apiSender, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { requestAt } from './helpers/request.ts';
import { scrape, type Scrape } from './helpers/metrics.ts';
import { until } from './helpers/wait.ts';
import { newId } from '../shared/ids.ts';

let w: MtaWorld;
let receiver: Receiver;
const procs: Record<string, EntryProcess> = {};
const ports = { api: 0, apiMetrics: 0, mtaMetrics: 0, submission: 0, mx: 0 };

type LogLine = Record<string, unknown> & { msg: string };
const lines = (proc: EntryProcess): LogLine[] =>
  proc
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
const lineOf = (proc: EntryProcess, msg: string, fields: Record<string, unknown> = {}) =>
  lines(proc).find((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l[k] === v));
/** The port a process's metrics listener took, from its `metrics.listening` line. */
const metricsPort = (proc: EntryProcess) => lineOf(proc, 'metrics.listening')!.port as number;

test.before(async () => {
  w = await startMtaWorld({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  receiver = await startReceiver();
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  procs.api = startEntry('api/main.ts', w.p.config, {
    PORT: String(ports.api),
    METRICS_API_PORT: String(ports.apiMetrics),
  });
  procs.mta = startEntry('mta/main.ts', w.p.config, {
    SMTP_SUBMISSION_PORT: String(ports.submission),
    SMTP_SUBMISSION_TLS_PORT: '0',
    METRICS_MTA_PORT: String(ports.mtaMetrics),
  });
  // The platform's configuration has METRICS_INBOUND_PORT and METRICS_WORKER_PORT at 0: the kernel picks them.
  procs.inbound = startEntry('inbound/main.ts', w.p.config, { MX_HOST: '127.0.0.1', MX_PORT: String(ports.mx) });
  // Two DKIM keys made ahead by the worker itself: the machine's test keys the platform put in the pool
  // (helpers/test-keys.ts) taken out first.
  await w.p.db('dkim_key_pool').delete();
  procs.worker = startEntry('worker/main.ts', w.p.config, { DKIM_KEY_POOL_SIZE: '2' });
  // Starting takes seconds alone and far longer while the rest of the suite runs on the same two cores.
  await Promise.all([
    procs.api.logged('api.listening', 120_000),
    procs.mta.logged('mta.started', 120_000),
    procs.inbound.logged('mx.listening', 120_000),
    procs.worker.logged('worker.started', 120_000),
  ]);
});

test.after.always(async () => {
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await receiver?.close();
  await w?.close();
});

test.serial('each process listens for metrics on its own port, and says where', (t) => {
  const api = lineOf(procs.api, 'metrics.listening')!;
  t.like(api, { host: '127.0.0.1', port: ports.apiMetrics, variable: 'METRICS_API_PORT' });
  t.is(api.kernelPicked, undefined, 'a port set explicitly is not the kernel pick');
  t.like(lineOf(procs.mta, 'metrics.listening'), { port: ports.mtaMetrics, variable: 'METRICS_MTA_PORT' });
  for (const [proc, variable] of [
    ['inbound', 'METRICS_INBOUND_PORT'],
    ['worker', 'METRICS_WORKER_PORT'],
  ] as const) {
    const line = lineOf(procs[proc], 'metrics.listening');
    t.like(line, { host: '127.0.0.1', variable, kernelPicked: true }, `${proc}: port 0 is the kernel's pick, logged`);
    t.true((line!.port as number) > 0);
  }
  const all = [ports.api, ports.apiMetrics, ports.mtaMetrics, metricsPort(procs.inbound), metricsPort(procs.worker)];
  t.is(new Set(all).size, all.length, 'no metrics listener shares a port with another or with the api');
});

/** What one run of traffic leaves to check: the emails' ids and request ids, the team that sent them. */
interface Traffic {
  sender: Awaited<ReturnType<typeof apiSender>>;
  emailId: string;
  requestId: string;
  scheduledRequestId: string;
}

/** A webhook, a send, a scheduled send, two MX sessions and a bare submission session; then their deliveries. */
async function sendTraffic(t: ExecutionContext): Promise<Traffic> {
  const api = (method: string, path: string, o: Parameters<typeof requestAt>[3] = {}) =>
    requestAt(`http://127.0.0.1:${ports.api}`, method, path, o);
  const sender = await apiSender(w, 'observed-shop.test');
  // The real worker verifies new domains: its records are published, so its verdict agrees with the test's.
  const domain = await w.p.request('GET', `/domains/${sender.domain.id}`, { key: sender.team.key });
  const published = new Date();
  publishRecords(w.dns, sender.domain.name, domain.body.records);
  // A check of the worker's may have come before the records were published: ask again, as a person would. The
  // helper marked the domain verified itself, so only a check that began after the records went up counts (one
  // that began before could still write what it found then).
  await until(
    async () => {
      const at = `/domains/${sender.domain.id}`;
      const row = await w.p.db('domains').where({ id: sender.domain.id }).first();
      if (row.status === 'verified' && row.last_checked_at >= published) return true;
      await w.p.request('POST', `${at}/verify`, { key: sender.team.key });
      return false;
    },
    { what: `${sender.domain.name} verified`, timeoutMs: 30_000, intervalMs: 300 },
  );
  w.mx('observed-inbox.test');
  const hook = await api('POST', '/webhooks', {
    key: sender.team.key,
    body: { endpoint: receiver.url, events: ['email.sent', 'email.delivered'] },
  });
  t.is(hook.status, 201, hook.text);

  // The client's own request id is kept (plain text) and named on every line about the email.
  const requestId = `obs-${randomBytes(6).toString('hex')}`;
  const sent = await api('POST', '/emails', {
    key: sender.team.key,
    headers: { 'x-request-id': requestId },
    body: { from: `Shop <shop@${sender.domain.name}>`, to: 'ada@observed-inbox.test', subject: 'Hi', text: 'Hi' },
  });
  t.is(sent.status, 200, sent.text);
  t.is(sent.headers.get('x-request-id'), requestId);
  const emailId: string = sent.body.id;
  t.is((await w.p.db('emails').where({ id: emailId }).first()).request_id, requestId, 'kept with the email');

  // A scheduled send, released by the worker a moment later, to the simulator.
  const scheduledRequestId = `obs-${randomBytes(6).toString('hex')}`;
  const scheduled = await api('POST', '/emails', {
    key: sender.team.key,
    headers: { 'x-request-id': scheduledRequestId },
    body: {
      from: `Shop <shop@${sender.domain.name}>`,
      to: w.sim('delivered'),
      subject: 'Later',
      text: 'Later',
      scheduled_at: new Date(Date.now() + 2000).toISOString(),
    },
  });
  t.is(scheduled.status, 200, scheduled.text);

  // The inbound MX: a recipient it does not serve is refused; one of a receiving domain is stored and processed.
  const receiving = `rx-${randomBytes(4).toString('hex')}.test`;
  await w.p
    .db('domains')
    .insert({ id: newId(), team_id: sender.team.id, name: receiving, status: 'verified', receiving: 'enabled' });
  const mx = nodemailer.createTransport({
    host: '127.0.0.1',
    port: ports.mx,
    secure: false,
    tls: { rejectUnauthorized: false },
  });
  await t.throwsAsync(mx.sendMail({ from: 'a@sender.test', to: 'nobody@not-ours.test', subject: 'x', text: 'x' }), {
    message: /550/,
  });
  const stored = await mx.sendMail({ from: 'a@sender.test', to: `inbox@${receiving}`, subject: 'In', text: 'In' });
  t.regex(stored.response, /^250 /);
  // A submission session that only says hello and goodbye.
  await new Promise<void>((resolve, reject) => {
    const s = connect(ports.submission, '127.0.0.1');
    s.once('data', () => s.end('QUIT\r\n'));
    s.once('close', () => resolve());
    s.once('error', reject);
  });

  await until(() => receiver.received.some((r) => JSON.parse(r.body).type === 'email.delivered'), {
    timeoutMs: 60_000,
    what: 'the email.delivered webhook',
  });
  await until(() => lineOf(procs.mta, 'delivery.delivered', { requestId: scheduledRequestId }), {
    timeoutMs: 60_000,
    what: 'the scheduled email delivered',
  });

  return { sender, emailId, requestId, scheduledRequestId };
}

/** Every process's metrics moved for that traffic. */
async function checkMetrics(t: ExecutionContext, { emailId }: Traffic): Promise<void> {
  const scrapeUntil = (port: number, what: string, ready: (s: Scrape) => boolean) =>
    until(
      async () => {
        const s = await scrape(port);
        return ready(s) && s;
      },
      { timeoutMs: 60_000, intervalMs: 200, what },
    );

  // The api: the request by its declared route, its latency, the emails accepted.
  const a = await scrape(ports.apiMetrics);
  t.is(a.value('postwerk_http_requests_total', { method: 'POST', route: '/emails', status: '200' }), 2);
  t.is(a.value('postwerk_http_requests_total', { method: 'POST', route: '/webhooks', status: '201' }), 1);
  t.is(a.value('postwerk_http_request_duration_seconds_count', { method: 'POST', route: '/emails' }), 2);
  t.is(a.value('postwerk_emails_accepted_total', { surface: 'api' }), 2);
  t.false(
    a.samples.some((s) => s.name === 'postwerk_http_requests_total' && s.labels.route?.includes(emailId)),
    'routes are templates, never URLs',
  );
  for (const kind of ['open', 'click'])
    for (const verdict of ['human', 'machine', 'refused'])
      t.is(
        a.value('postwerk_tracking_hits_total', { kind, verdict }),
        0,
        `tracking ${kind} ${verdict} at 0 from the start`,
      );
  t.truthy(a.value('process_cpu_user_seconds_total'), 'default process metrics');
  t.not(a.value('nodejs_eventloop_lag_seconds'), undefined);

  // The mta: both deliveries, one signed and sent over a connection it opened; its queues sampled at the scrape.
  const m = await scrapeUntil(
    ports.mtaMetrics,
    'two deliveries in the mta metrics',
    (s) => s.value('postwerk_deliveries_total', { outcome: 'delivered' }) === 2,
  );
  t.true(m.value('postwerk_dkim_signing_duration_seconds_count')! >= 1);
  t.true(m.value('postwerk_smtp_delivery_connections_total', { result: 'opened' })! >= 1);
  t.is(m.value('postwerk_smtp_submission_sessions_total', { listener: 'starttls' }), 1);
  t.is(m.value('postwerk_smtp_submission_sessions_open', { listener: 'starttls' }), 0);
  t.is(m.value('postwerk_smtp_submission_sessions_total', { listener: 'tls' }), 0, 'a listener without sessions: 0');
  // The SMTP surface's accepted counter from the start (at 0), and the process's own series once.
  t.is(m.value('postwerk_emails_accepted_total', { surface: 'smtp' }), 0);
  t.is(m.samples.filter((s) => s.name === 'process_cpu_user_seconds_total').length, 1);
  t.truthy(m.value('process_cpu_user_seconds_total'));
  for (const queue of ['deliver', 'deliver-bulk']) {
    for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'failed'])
      t.not(m.value('postwerk_queue_jobs', { queue, state }), undefined, `${queue} ${state}`);
    t.not(m.value('postwerk_queue_oldest_waiting_age_seconds', { queue }), undefined);
  }

  // The inbound: two sessions, the refused and the accepted recipient, the stored message and its receive job. The
  // MX's figures come from its thread, relayed within 100 ms: the receive job may be counted before them.
  const i = await scrapeUntil(
    metricsPort(procs.inbound),
    "the receive job and the MX thread's sessions in the inbound metrics",
    (s) =>
      s.value('postwerk_receive_jobs_total', { result: 'processed' }) === 1 &&
      s.value('postwerk_mx_sessions_total') === 2 &&
      s.value('postwerk_mx_messages_total', { result: 'accepted' }) === 1,
  );
  t.is(i.value('postwerk_mx_sessions_total'), 2);
  t.is(i.value('postwerk_mx_recipients_total', { result: 'refused' }), 1);
  t.is(i.value('postwerk_mx_recipients_total', { result: 'accepted' }), 1);
  t.is(i.value('postwerk_mx_messages_total', { result: 'accepted' }), 1);
  t.is(i.value('postwerk_receive_job_duration_seconds_count', { result: 'processed' }), 1);
  t.not(i.value('postwerk_queue_jobs', { queue: 'receive', state: 'waiting' }), undefined);

  // The worker: the webhook deliveries (email.sent and email.delivered of both emails) and their lag; the release.
  const k = await scrapeUntil(
    metricsPort(procs.worker),
    'four webhook deliveries in the worker metrics',
    (s) => s.value('postwerk_webhook_deliveries_total', { result: 'success' }) === 4,
  );
  t.is(k.value('postwerk_webhook_lag_seconds_count'), 4);
  t.is(k.value('postwerk_scheduled_emails_released_total'), 1);
  t.not(k.value('postwerk_queue_jobs', { queue: 'domains', state: 'delayed' }), undefined, 'the DKIM pool schedule');
  t.not(k.value('postwerk_queue_jobs', { queue: 'broadcasts', state: 'waiting' }), undefined, 'the fan-outs');
}

/** The api's request line, the mta's delivery lines and the worker's lines name the same request. */
async function checkLogs(t: ExecutionContext, { sender, emailId, requestId, scheduledRequestId }: Traffic) {
  const request = lineOf(procs.api, 'request', { requestId, route: '/emails' });
  t.like(request, { method: 'POST', status: 200, teamId: sender.team.id });
  t.is(typeof request?.ms, 'number');
  const delivered = lineOf(procs.mta, 'delivery.delivered', { emailId });
  t.like(delivered, {
    requestId,
    teamId: sender.team.id,
    domain: 'observed-inbox.test',
    mx: 'mx.observed-inbox.test',
    attempt: 1,
  });
  t.regex(String(delivered?.response), /^250 /);
  const webhook = await until(() => lineOf(procs.worker, 'webhook.delivered', { emailId, type: 'email.delivered' }), {
    what: "the worker's webhook line",
  });
  t.like(webhook, { requestId, status: 200, attempt: 1 });
  t.like(lineOf(procs.worker, 'email.released', { requestId: scheduledRequestId }), { teamId: sender.team.id });
  t.like(lineOf(procs.mta, 'delivery.delivered', { requestId: scheduledRequestId }), {
    domain: w.p.config.SIMULATOR_DOMAIN,
    mx: null,
  });
}

test.serial('a send through the api: metrics of every process move, and the logs join on its request id', async (t) => {
  t.timeout(180_000);
  const traffic = await sendTraffic(t);
  await checkMetrics(t, traffic);
  await checkLogs(t, traffic);
});

test.serial(
  'the metrics are not on the api port; the metrics listener serves GET /metrics and nothing else',
  async (t) => {
    const onApi = await requestAt(`http://127.0.0.1:${ports.api}`, 'GET', '/metrics');
    t.is(onApi.status, 404);
    t.is(onApi.body.name, 'not_found');
    const base = `http://127.0.0.1:${ports.apiMetrics}`;
    const ok = await fetch(`${base}/metrics`);
    t.is(ok.status, 200);
    t.regex(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    t.regex(await ok.text(), /^# HELP /m);
    t.is((await fetch(`${base}/`)).status, 404);
    t.is((await fetch(`${base}/metrics/x`)).status, 404);
    t.is((await fetch(`${base}/metrics`, { method: 'POST' })).status, 404);
  },
);

test.serial('the worker makes DKIM_KEY_POOL_SIZE keys ahead, and a new domain takes one of them', async (t) => {
  const pooled = await until(
    async () => {
      const keys: string[] = await w.p.db('dkim_key_pool').pluck('public_key');
      return keys.length === 2 ? keys : undefined;
    },
    { what: 'two keys in dkim_key_pool', timeoutMs: 120_000 },
  );
  const team = await w.p.createTeam();
  const made = await w.p.request('POST', '/domains', { key: team.key, body: { name: `pool-${newId()}.test` } });
  t.is(made.status, 201, JSON.stringify(made.body));
  const key = await w.p.db('dkim_keys').where({ domain_id: made.body.id }).first();
  t.true(pooled.includes(key.public_key), 'the domain signs with a key from the pool');
  t.false((await w.p.db('dkim_key_pool').pluck('public_key')).includes(key.public_key), 'taken out of the pool');
});

test.serial('METRICS_ENABLED=false: a process starts without a metrics listener and says so', async (t) => {
  t.timeout(150_000);
  const worker = startEntry('worker/main.ts', w.p.config, { METRICS_ENABLED: 'false' });
  t.teardown(() => worker.stop());
  await worker.logged('worker.started', 120_000);
  t.truthy(lineOf(worker, 'metrics.off'));
  t.is(lineOf(worker, 'metrics.listening'), undefined);
});
