// The webhooks as production runs them: the real worker process (worker/main.ts, the production entry point)
// on the test platform's database and Redis, nothing driven by hand. An action through the api records an event;
// the worker, woken by the database, fans it out and POSTs it signed to a loopback receiver.
import test from 'ava';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let worker: EntryProcess | undefined;
const receivers: Receiver[] = [];

test.before(async () => {
  p = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
});

test.after.always(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await p?.close();
});

/** The server's oldest running transactions that hold a transaction id: what holds an event back. */
async function olderTransactions(events: number): Promise<string> {
  const { rows } = await p.db.raw(
    `select datname, pid, state, round(extract(epoch from now() - xact_start)::numeric, 1) as age_s, left(query, 60) as query from pg_stat_activity
      where backend_xid is not null and pid <> pg_backend_pid() order by xact_start limit 3`,
  );
  return `${events} event(s); ` + JSON.stringify(rows);
}

test.serial('the worker process delivers an event on its own, signed, soon after the commit', async (t) => {
  t.timeout(90_000);
  // At the test processes' priority (WORKER_NICE=0, helpers/platform.ts).
  worker = startEntry('worker/main.ts', p.config);
  await worker.logged('worker.started');
  const team = await p.createTeam('Worker');
  const r = await startReceiver();
  receivers.push(r);
  const created = await p.request('POST', '/webhooks', {
    key: team.key,
    body: { endpoint: r.url, events: ['suppression.added', 'suppression.removed'] },
  });
  t.is(created.status, 201);
  const secret: string = created.body.signing_secret;

  const committed = Date.now();
  t.is(
    (await p.request('POST', '/suppressions', { key: team.key, body: { email: 'worker@example.com' } })).status,
    201,
  );
  // The event is due once every transaction older than its own has ended, in any database of the server: the
  // test files running beside this one share it. The worker's part is the time from then to the delivery.
  const holders: string[] = [];
  const due = await until(
    async () => {
      const { rows } = await p.db.raw(
        `select e.xid < pg_snapshot_xmin(pg_current_snapshot()) as due from events e
          where e.team_id = ? and e.type = 'suppression.added'`,
        [team.id],
      );
      if (rows[0]?.due) return Date.now();
      // Once a second past the first: which transactions hold it back.
      if (holders.length < 5 && Date.now() - committed > 1_000 * (holders.length + 1)) {
        holders.push(await olderTransactions(rows.length));
      }
      return undefined;
    },
    { timeoutMs: 60_000, what: 'the event to be due (every older transaction ended)' },
  );
  await until(() => r.received.length >= 1, { timeoutMs: 20_000, what: 'the first webhook' });
  const delay = Date.now() - due;
  t.log(`due ${due - committed} ms after the api answered, delivered ${delay} ms after that`);
  if (holders.length) t.log(`held back by: ${holders.join(' | ')}`);
  // Woken by the look: a fraction of a second on a quiet machine; the bound is for a busy CI machine.
  t.true(delay < 10_000);

  // A burst: each arrives once, in the order recorded.
  const emails = Array.from({ length: 20 }, (_, i) => `burst${i}@example.com`);
  for (const email of emails) await p.request('POST', '/suppressions', { key: team.key, body: { email } });
  await until(() => r.received.length >= 21, { timeoutMs: 20_000, what: 'the burst' });
  const bodies = r.received.map((x) => JSON.parse(x.body));
  t.deepEqual(
    bodies.map((b) => b.data.email),
    ['worker@example.com', ...emails],
  );
  t.true(bodies.every((b) => b.type === 'suppression.added'));
  for (const got of r.received) {
    const h = got.headers as Record<string, string>;
    t.deepEqual(
      new StandardWebhook(secret).verify(got.body, {
        'webhook-id': h['webhook-id'],
        'webhook-timestamp': h['webhook-timestamp'],
        'webhook-signature': h['webhook-signature'],
      }),
      JSON.parse(got.body),
    );
    t.deepEqual(
      new SvixWebhook(secret).verify(got.body, {
        'svix-id': h['svix-id'],
        'svix-timestamp': h['svix-timestamp'],
        'svix-signature': h['svix-signature'],
      }),
      JSON.parse(got.body),
    );
    // The official SDK's own check, as a customer's receiver calls it (no request: it verifies locally).
    const sdk = new Resend('re_unused');
    const headers = { id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'] };
    t.deepEqual(sdk.webhooks.verify({ payload: got.body, headers, webhookSecret: secret }), JSON.parse(got.body));
    t.throws(() =>
      sdk.webhooks.verify({ payload: got.body.replace('suppression', 'Suppression'), headers, webhookSecret: secret }),
    );
  }
  t.is(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 21);
  // Their attempts are recorded a moment after the receiver has them.
  const statuses = await until(
    async () => {
      const now = await p.db('webhook_deliveries').where({ team_id: team.id }).pluck('status');
      return now.length === 21 && now.every((x: string) => x === 'success') ? now : undefined;
    },
    { what: '21 successful deliveries recorded' },
  );
  t.deepEqual(statuses, Array(21).fill('success'));
  // A clean stop: SIGTERM drains and exits 0.
  // Its other jobs (a DKIM key pool refill) may be running: they finish first.
  const code = await worker.stop(30_000);
  if (code !== 0) t.log(worker.output().slice(-3000));
  t.is(code, 0);
  t.regex(worker.output(), /"msg":"process.stopped"/);
  worker = undefined;
});
