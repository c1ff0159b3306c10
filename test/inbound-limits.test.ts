// Receiving limits through the real MX and receive job: the operator CLI sets a team's daily cap and storage
// allowance, a message past either is recorded as dropped (daily_cap, storage_quota) with no body, no
// attachments, no raw and no email.received; the day is the UTC day; deleting a message returns its bytes;
// concurrent jobs never keep more than the cap. And parse_failed for real: a message mailparser refuses
// (over its MIME part limit) keeps its raw source.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startTestMx, storedBytes, type TestMx } from './helpers/receive-job.ts';
import { runCli } from './helpers/cli.ts';
import { processReceived } from '../inbound/receive/job.ts';

let p: Platform;
let mx: TestMx;

test.before(async () => {
  p = await startPlatform();
  mx = await startTestMx(p);
});
test.after.always(async () => {
  await mx?.close();
  await p?.close();
});

/** The operator CLI as operators run it, on this test's database. */
const cli = (...args: string[]) => runCli({ DATABASE_URL: p.config.DATABASE_URL }, ...args);

const mail = (subject: string, bytes = 10) => ({
  from: 'a@sender.test',
  subject,
  text: `body ${'x'.repeat(bytes)}`,
  html: '<p>body</p>',
  attachments: [{ filename: 'a.txt', content: 'attached' }],
});

async function receiveOne(to: string, subject: string, bytes?: number) {
  const id = await mx.send([to], mail(subject, bytes));
  if ((await processReceived(mx.deps, id)) !== 'processed') throw new Error('not processed');
  return { id, email: await p.db('received_emails').where({ id }).first() };
}

async function isDroppedWholly(
  t: import('ava').ExecutionContext,
  r: Awaited<ReturnType<typeof receiveOne>>,
  reason: string,
) {
  t.is(r.email.dropped_reason, reason);
  t.is(r.email.html, null);
  t.is(r.email.text, null);
  t.deepEqual(await p.db('received_attachments').where({ email_id: r.id }), []);
  t.is(await storedBytes(p, r.id), null, 'the raw source is not kept');
  t.is(
    (await p.db('events').where({ type: 'email.received' }).whereRaw(`data->>'email_id' = ?`, [r.id])).length,
    0,
    'nothing announced',
  );
}

test.serial('team set-receive-limits sets and clears the limits; bad values are usage errors', async (t) => {
  const team = await p.createTeam();
  const set = await cli(
    'team',
    'set-receive-limits',
    '--team',
    team.id,
    '--daily-cap',
    '500',
    '--storage-bytes',
    '1073741824',
  );
  t.is(set.code, 0, set.stderr);
  t.deepEqual(JSON.parse(set.stdout).team, { id: team.id, receive_daily_cap: 500, receive_storage_bytes: 1073741824 });
  const cleared = await cli('team', 'set-receive-limits', '--team', team.id, '--daily-cap', 'none');
  t.deepEqual(JSON.parse(cleared.stdout).team, {
    id: team.id,
    receive_daily_cap: null,
    receive_storage_bytes: 1073741824,
  });
  for (const args of [['--daily-cap', '0'], ['--storage-bytes', '1.5'], ['--daily-cap', 'lots'], []]) {
    const bad = await cli('team', 'set-receive-limits', '--team', team.id, ...args);
    t.is(bad.code, 2, args.join(' '));
    t.is(typeof JSON.parse(bad.stderr).error, 'string');
  }
  t.like(await p.db('teams').where({ id: team.id }).first(), {
    receive_daily_cap: null,
    receive_storage_bytes: 1073741824,
  });
});

test.serial('daily_cap: past the cap a message is recorded dropped, wholly; the count is per UTC day', async (t) => {
  const { team } = await mx.receivingTeam('cap.test');
  t.is((await cli('team', 'set-receive-limits', '--team', team.id, '--daily-cap', '2')).code, 0);
  const kept = [await receiveOne('x@cap.test', 'one'), await receiveOne('x@cap.test', 'two')];
  t.deepEqual(
    kept.map((r) => r.email.dropped_reason),
    [null, null],
  );
  const third = await receiveOne('x@cap.test', 'three');
  await isDroppedWholly(t, third, 'daily_cap');
  t.is(third.email.subject, 'three', 'the header fields are kept');
  t.is((await p.db('events').where({ team_id: team.id, type: 'email.received' })).length, 2);

  // The two kept ones received yesterday (UTC): today has room again. Dropped records never count.
  const yesterday = new Date(Date.now() - 86_400_000);
  await p
    .db('received_emails')
    .whereIn(
      'id',
      kept.map((r) => r.id),
    )
    .update({ created_at: yesterday });
  t.is((await receiveOne('x@cap.test', 'four')).email.dropped_reason, null);
});

test.serial(
  'storage_quota: the bytes of kept messages; a message that does not fit is dropped; deleting one returns its bytes',
  async (t) => {
    const { team } = await mx.receivingTeam('quota.test');
    const first = await receiveOne('x@quota.test', 'big', 3000);
    t.is(first.email.dropped_reason, null);
    const size = (await p.db('received_messages').where({ id: first.id }).first()).size as number;
    // Room for the first message and half of another.
    t.is(
      (await cli('team', 'set-receive-limits', '--team', team.id, '--storage-bytes', String(Math.floor(size * 1.5))))
        .code,
      0,
    );
    const second = await receiveOne('x@quota.test', 'full', 3000);
    await isDroppedWholly(t, second, 'storage_quota');
    const third = await receiveOne('x@quota.test', 'still full', 3000);
    t.is(
      third.email.dropped_reason,
      'storage_quota',
      'dropped records take no room, so the mailbox stays as full as it was',
    );

    // What DELETE /emails/receiving/{id} does to the rows: the message goes, and its bytes with it.
    await p.db('received_messages').where({ id: first.id }).delete();
    t.is((await receiveOne('x@quota.test', 'room again', 3000)).email.dropped_reason, null);
  },
);

test.serial('concurrent jobs never keep more than the daily cap', async (t) => {
  const { team } = await mx.receivingTeam('race.test');
  await p.db('teams').where({ id: team.id }).update({ receive_daily_cap: 3 });
  const ids = [];
  for (let i = 0; i < 10; i++) ids.push(await mx.send(['x@race.test'], mail(`race ${i}`)));
  t.deepEqual(
    await Promise.all(ids.map((id) => processReceived(mx.deps, id))),
    ids.map(() => 'processed'),
  );
  const rows = await p.db('received_emails').whereIn('id', ids);
  t.is(rows.filter((r) => r.dropped_reason === null).length, 3);
  t.is(rows.filter((r) => r.dropped_reason === 'daily_cap').length, 7);
  t.is((await p.db('events').where({ team_id: team.id, type: 'email.received' })).length, 3);
});

test.serial(
  "parse_failed for real: past mailparser's 1000 MIME parts the message is dropped, its raw source kept as received",
  async (t) => {
    const { team } = await mx.receivingTeam('unparsable.test');
    const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
      '',
    );
    const raw = `From: a@sender.test\r\nSubject: many parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n`;
    const id = await mx.send(['x@unparsable.test'], { raw });
    t.is(await processReceived(mx.deps, id), 'processed');
    const email = await p.db('received_emails').where({ id }).first();
    t.is(email.dropped_reason, 'parse_failed');
    t.is(email.html, null);
    t.is(email.text, null);
    t.deepEqual(await p.db('received_attachments').where({ email_id: id }), []);
    const kept = (await storedBytes(p, id))?.toString() ?? '';
    t.regex(kept, /^Received: from /, 'our trace field first');
    t.true(kept.endsWith(raw), 'then the message as received, byte for byte');
    t.deepEqual(await p.db('events').where({ team_id: team.id, type: 'email.received' }), []);
  },
);
