// Dropped received records age out after their team's data retention window (spec, Receiving: removed whole,
// answering 404 after), run by the worker's maintenance. Kept messages have no window.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { runCli } from './helpers/cli.ts';
import { newId } from '../shared/ids.ts';
import { secretsKey } from '../shared/secrets.ts';
import { storeReceivedMessage } from '../inbound/mx/store.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { runMaintenance } from '../worker/maintenance.ts';
import { storedBytes } from './helpers/receive-job.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const DAY = 24 * 3600_000;

/** A message through the MX's store and the real receive job, received `daysAgo` days ago. */
async function receive(team: TestTeam, domain: { id: string; name: string }, daysAgo: number) {
  const raw = Buffer.from(
    [
      `From: Someone <someone@sender.test>`,
      `To: inbox@${domain.name}`,
      `Subject: ${daysAgo} days`,
      '',
      'Hello',
      '',
    ].join('\r\n'),
  );
  const [id] = await storeReceivedMessage(p.db, p.deps.blobs, {
    raw,
    envelopeFrom: 'someone@sender.test',
    recipients: [
      { address: `inbox@${domain.name}`, recipient: { kind: 'mail', teamId: team.id, domainId: domain.id } },
    ],
    remoteIp: '127.0.0.1',
    helo: 'sender.test',
    tls: false,
    byHost: 'mx.test',
  });
  await processReceived({ db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) }, id);
  await p
    .db('received_emails')
    .where({ id })
    .update({ created_at: new Date(Date.now() - daysAgo * DAY) });
  return { id };
}

async function receivingDomain(team: TestTeam) {
  const domain = { id: newId(), name: `rx-${Math.random().toString(36).slice(2, 10)}.test` };
  await p.db('domains').insert({ ...domain, team_id: team.id, status: 'verified', receiving: 'enabled' });
  return domain;
}

const status = async (team: TestTeam, id: string) =>
  (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).status;

test("dropped records older than the team's window go whole; young ones, kept ones and longer windows stay", async (t) => {
  const team = await p.createTeam();
  const patient = await p.createTeam();
  const [domain, patientDomain] = [await receivingDomain(team), await receivingDomain(patient)];
  const keptOld = await receive(team, domain, 400);
  // A daily cap of one message: what comes after the first is dropped (daily_cap), recorded without content.
  await p.db('teams').whereIn('id', [team.id, patient.id]).update({ receive_daily_cap: 1 });
  // Today's one message each: what comes after it today is dropped.
  await receive(team, domain, 0);
  await receive(patient, patientDomain, 0);
  const [old, young, patientOld] = [
    await receive(team, domain, 31),
    await receive(team, domain, 29),
    await receive(patient, patientDomain, 31),
  ];
  for (const r of [old, young, patientOld]) {
    t.is((await p.db('received_emails').where({ id: r.id }).first('dropped_reason')).dropped_reason, 'daily_cap');
  }
  t.is(await status(team, old.id), 200, 'a dropped record answers until it ages out');

  // The default window is 30 days; the patient team's operator keeps 60.
  t.is((await p.db('teams').where({ id: team.id }).first('data_retention_days')).data_retention_days, 30);
  const set = await runCli(
    { DATABASE_URL: p.config.DATABASE_URL },
    'team',
    'set-retention',
    '--team',
    patient.id,
    '--days',
    '60',
  );
  t.is(set.code, 0, set.stderr);
  t.like(JSON.parse(set.stdout).team, { id: patient.id, data_retention_days: 60 });
  const refused = await runCli(
    { DATABASE_URL: p.config.DATABASE_URL },
    'team',
    'set-retention',
    '--team',
    patient.id,
    '--days',
    '0',
  );
  t.not(refused.code, 0);
  t.regex(refused.stderr, /--days is a whole number/);

  const removed = await runMaintenance(p.db, p.deps.blobs, new Date());
  t.is(removed.dropped_received, 1);
  t.is(await status(team, old.id), 404);
  t.is(await p.db('received_messages').where({ id: old.id }).first(), undefined, 'the message row went too');
  t.is(await storedBytes(p, old.id), null, 'its raw source went');
  for (const [who, r] of [
    [team, young],
    [team, keptOld],
    [patient, patientOld],
  ] as const)
    t.is(await status(who, r.id), 200);
  t.not(await storedBytes(p, keptOld.id), null);

  // A second run finds nothing more; the window shortened, the patient team's record goes too.
  t.is((await runMaintenance(p.db, p.deps.blobs, new Date())).dropped_received, 0);
  await runCli({ DATABASE_URL: p.config.DATABASE_URL }, 'team', 'set-retention', '--team', patient.id, '--days', '30');
  t.is((await runMaintenance(p.db, p.deps.blobs, new Date())).dropped_received, 1);
  t.is(await status(patient, patientOld.id), 404);
});
