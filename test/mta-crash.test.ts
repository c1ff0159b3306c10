// Durability against a real crash: the mta process is killed with SIGKILL in the middle of a run and a new mta process
// finishes the work within 60 s of its start (the dead one's leases run out in LEASE_MS, 30 s). No accepted email is
// lost; a recipient gets a second copy only when the kill fell between its receiver's 250 and our commit (the
// at-least-once window).
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { insertEmail } from './helpers/emails.ts';
import { Children, exited } from './helpers/processes.ts';
import { createQueue, queues } from '../shared/queue.ts';
import type { Config } from '../shared/config.ts';
import { until } from './helpers/wait.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld({ sink: { dataDelayMs: 30 } });
});
// Every mta this file starts is killed at the end, whatever happened.
const children = new Children();
test.after.always(async () => {
  await children.killAll();
  await w?.close();
});

const CONCURRENCY = 4;

// Submission on ports of the kernel's choosing: another test file may run an mta at the same time.
const startMta = (config: Config): ChildProcess =>
  children.start('mta/main.ts', config, {
    MTA_CONCURRENCY: String(CONCURRENCY),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_SUBMISSION_TLS_PORT: '0',
  });

test('kill -9 mid-run, restart: every recipient delivered, duplicates only inside the 250-to-commit window', async (t) => {
  t.timeout(150_000);
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'sender-crash.test');
  w.mx('crash-rcpt.test');
  const total = 40;
  const addresses = Array.from({ length: total }, (_, i) => `user${i}@crash-rcpt.test`);
  const ids: string[] = [];
  for (const a of addresses) ids.push(await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to: [a] }));
  const queue = createQueue(w.p.config, queues.deliver);
  await queue.addBulk(ids.map((emailId) => ({ name: 'deliver', data: { emailId }, opts: { jobId: emailId } })));

  let mta = startMta(w.p.config);
  // Generous: on a loaded machine the child's start (tsx) alone can take many seconds.
  await w.sink.waitFor(() => w.sink.messages.length >= 8, 60_000);
  mta.kill('SIGKILL');
  await exited(mta);
  const atKill = w.sink.messages.length;
  const stranded = Number(
    (
      await w.p
        .db('email_recipients')
        .whereIn('email_id', ids)
        .whereNotNull('leased_until')
        .whereNot({ status: 'delivered' })
        .count({ n: '*' })
        .first()
    )?.n,
  );
  t.log(`killed after ${atKill} messages at the sink, ${stranded} recipients left leased`);

  mta = startMta(w.p.config);
  const restarted = Date.now();
  try {
    // The dead process's leases run out (LEASE_MS) and the sweep hands them on; a job that was running when the
    // mta died and had not leased yet is taken back after ACTIVE_GRACE_MS (sweep.ts). All of it within 60 s.
    await until(
      async () => {
        const open = await w.p
          .db('email_recipients')
          .whereIn('email_id', ids)
          .whereNot({ status: 'delivered' })
          .count({ n: '*' })
          .first();
        return Number(open?.n) === 0 || undefined;
      },
      { what: 'every recipient delivered', timeoutMs: restarted + 60_000 - Date.now(), intervalMs: 100 },
    );
  } finally {
    mta.kill('SIGTERM');
    await exited(mta);
    await queue.close();
  }
  t.log(`everything delivered ${((Date.now() - restarted) / 1000).toFixed(1)} s after the restart`);
  const counts = addresses.map((a) => w.sink.deliveredTo(a).length);
  t.true(
    counts.every((n) => n >= 1),
    'nothing lost',
  );
  const duplicates = counts.reduce((n, c) => n + c - 1, 0);
  t.log(`duplicates: ${duplicates}`);
  t.true(duplicates <= Math.min(stranded, CONCURRENCY), 'a second copy only for what was in flight at the kill');
  const events = await w.p
    .db('events')
    .whereRaw(`data->>'email_id' = any(?)`, [ids])
    .where({ type: 'email.delivered' });
  t.is(events.length, total, 'one email.delivered per email');
});
