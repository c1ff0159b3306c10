// Virus scanning of received mail against a real clamd (test/helpers/clamd.ts: a private daemon whose only
// signature is EICAR): an infected message is dropped as `virus` and its raw source deleted, a clean one is
// kept, a clamd that is down keeps the message stored until it is back (the queue retries, nothing is lost),
// and /ready reports scanning off, on with clamd answering, and degraded when clamd is gone.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startClamd, EICAR, EICAR_SIGNATURE, type Clamd } from './helpers/clamd.ts';
import { startTestMx, storedBytes, type TestMx } from './helpers/receive-job.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';
import { ScanUnavailableError } from '../inbound/receive/scan.ts';
import { enqueueReceive } from '../inbound/receive/sweep.ts';
import { createClamdScanner } from '../shared/clamd/client.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let mx: TestMx;
let clamd: Clamd;
let deps: ReceiveDeps;

test.before(async () => {
  [p, clamd] = await Promise.all([startPlatform(), startClamd()]);
  mx = await startTestMx(p);
  deps = { ...mx.deps, scanner: createClamdScanner(clamd.address) };
});
test.after.always(async () => {
  await mx?.close();
  await Promise.allSettled([p?.close(), clamd?.close()]);
});

const mail = (attachments: { filename: string; content: string }[]) => ({
  from: 'Alice <alice@sender.test>',
  subject: 'Files',
  text: 'see attached',
  html: '<p>see attached</p>',
  attachments,
});

test.serial(
  'an EICAR attachment is dropped as virus: header fields kept, no body, no attachments, no event, raw deleted',
  async (t) => {
    const { team } = await mx.receivingTeam('scan-virus.test');
    const id = await mx.send(
      ['x@scan-virus.test'],
      mail([
        { filename: 'eicar.com', content: EICAR },
        { filename: 'ok.txt', content: 'fine' },
      ]),
    );
    t.truthy(await storedBytes(p, id), 'stored by the MX before the scan');

    t.is(await processReceived(deps, id), 'processed');
    const email = await p.db('received_emails').where({ id }).first();
    t.is(email.dropped_reason, 'virus');
    t.is(email.subject, 'Files');
    t.is(email.from, 'Alice <alice@sender.test>');
    t.is(email.html, null);
    t.is(email.text, null);
    t.deepEqual(await p.db('received_attachments').where({ email_id: id }), []);
    t.is(await storedBytes(p, id), null, 'refused and not stored');
    t.deepEqual(await p.db('events').where({ team_id: team.id, type: 'email.received' }), []);
    t.is((await p.db('received_messages').where({ id }).first()).status, 'processed');
  },
);

test.serial('a clean message passes the scan and is kept with its attachments and event', async (t) => {
  const { team } = await mx.receivingTeam('scan-clean.test');
  const id = await mx.send(['x@scan-clean.test'], mail([{ filename: 'notes.txt', content: 'EICAR is not in here' }]));
  t.is(await processReceived(deps, id), 'processed');
  const email = await p.db('received_emails').where({ id }).first();
  t.is(email.dropped_reason, null);
  t.is(email.text.trim(), 'see attached');
  t.deepEqual(
    (await p.db('received_attachments').where({ email_id: id })).map((a) => a.filename),
    ['notes.txt'],
  );
  t.is((await p.db('events').where({ team_id: team.id, type: 'email.received' })).length, 1);
});

test.serial('the scanner speaks to clamd at host:port as well as at a socket path', async (t) => {
  const tcp = await startClamd({ tcp: true });
  try {
    t.regex(tcp.address, /^127\.0\.0\.1:\d+$/);
    const scanner = createClamdScanner(tcp.address);
    t.deepEqual(await scanner.scan(Buffer.from(`Subject: x\r\n\r\n${EICAR}\r\n`)), {
      infected: true,
      viruses: [EICAR_SIGNATURE],
    });
    t.deepEqual(await scanner.scan(Buffer.from('Subject: x\r\n\r\nhello\r\n')), { infected: false, viruses: [] });
  } finally {
    await tcp.close();
  }
});

test.serial(
  'clamd down: the job fails and the message stays stored; the queue retries it and it is processed once clamd is back',
  async (t) => {
    const { team } = await mx.receivingTeam('scan-down.test');
    await clamd.stop();
    let restarted = false;
    try {
      const id = await mx.send(['x@scan-down.test'], mail([{ filename: 'eicar.com', content: EICAR }]));
      const err = await t.throwsAsync(processReceived(deps, id));
      t.true(err instanceof ScanUnavailableError, err?.message);
      t.is((await p.db('received_messages').where({ id }).first()).status, 'stored');
      t.falsy(
        await p.db('received_emails').where({ id }).first(),
        'nothing recorded, nothing dropped, nothing let through',
      );

      // The inbound's real wiring: a receive job on the queue (attempts with backoff), a worker running the job.
      const queue = createQueue(p.config, queues.receive);
      const failures: string[] = [];
      const worker = createWorker(p.config, queues.receive, async (job) =>
        processReceived(deps, String(job.data.messageId)),
      );
      worker.on('failed', (_job, e) => failures.push(e.name));
      try {
        await enqueueReceive(queue, [id]);
        await until(() => failures.length > 0, { what: 'a failed attempt', timeoutMs: 40_000, intervalMs: 50 });
        t.is((await p.db('received_messages').where({ id }).first()).status, 'stored');
        await clamd.start();
        restarted = true;
        const email = await until(async () => p.db('received_emails').where({ id }).first(), {
          what: 'the retry',
          timeoutMs: 40_000,
          intervalMs: 50,
        });
        t.is(email.dropped_reason, 'virus', 'scanned once clamd was back, not let through unscanned');
        t.true(
          failures.every((name) => name === 'ScanUnavailableError'),
          failures.join(),
        );
      } finally {
        await worker.close();
        await queue.close();
      }
      t.deepEqual(await p.db('events').where({ team_id: team.id, type: 'email.received' }), []);
    } finally {
      if (!restarted) await clamd.start();
    }
  },
);

test.serial(
  '/ready: scanning off without CLAMD_ADDRESS; with it, a clamd check that fails (503) while clamd is down',
  async (t) => {
    const off = await p.request('GET', '/ready');
    t.is(off.status, 200);
    t.is(off.body.virus_scanning, 'off');
    t.false(off.body.checks.some((c: { name: string }) => c.name === 'clamd'));

    const on = await startPlatform({ CLAMD_ADDRESS: clamd.address });
    try {
      const ready = await on.request('GET', '/ready');
      t.is(ready.status, 200);
      t.is(ready.body.virus_scanning, 'on');
      t.like(
        ready.body.checks.find((c: { name: string }) => c.name === 'clamd'),
        { ok: true },
      );
      await clamd.stop();
      const down = await on.request('GET', '/ready');
      t.is(down.status, 503);
      t.is(down.body.status, 'degraded');
      t.deepEqual(down.body.failed, ['clamd']);
      t.is(down.body.virus_scanning, 'on');
      t.regex(down.body.checks.find((c: { name: string }) => c.name === 'clamd').error, /ENOENT|ECONNREFUSED/);
    } finally {
      await clamd.start();
      await on.close();
    }
  },
);
