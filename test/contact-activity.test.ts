// Engagement data end to end: sends through the api, delivered by the real mta process (mta/main.ts) to a loopback
// SMTP sink, record each delivered address's activity in the same statement as email.delivered, so a segment
// filter on `received` matches exactly those contacts; a bounce records nothing. Opens and clicks arrive through
// noteActivity (tracking calls it), whose times only move forward.
import test from 'ava';
import { startMtaWorld, apiSender, type MtaWorld } from './helpers/mta.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';
import { createContact } from './helpers/contacts.ts';
import { matching } from './helpers/segment-filters.ts';
import { noteActivity } from '../shared/contacts/activity.ts';

let w: MtaWorld;
let mta: EntryProcess;
test.before(async () => {
  w = await startMtaWorld();
  mta = startEntry('mta/main.ts', w.p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  // Starting takes seconds alone and far longer while other tests run on the same two cores.
  await mta.logged('mta.started', 120_000);
});
test.after.always(async () => {
  await mta?.stop();
  await w?.close();
});

const RCPT = 'rcpt-activity.test';

interface ActivityRow {
  address: string;
  last_delivered_at: Date | null;
  last_opened_at: Date | null;
  last_clicked_at: Date | null;
}
const activityOf = (teamId: string): Promise<ActivityRow[]> =>
  w.p
    .db('contact_activity')
    .where({ team_id: teamId })
    .orderBy('address')
    .select('address', 'last_delivered_at', 'last_opened_at', 'last_clicked_at');

test('received: copies the mta delivered (a one-recipient email and a two-recipient one) match; a bounce does not', async (t) => {
  t.timeout(180_000);
  w.mx(RCPT);
  const sender = await apiSender(w, 'shop-activity.test');
  const team = sender.team;
  for (const local of ['Ann', 'bo', 'cy', 'dee', 'gone']) await createContact(w.p, team, { email: `${local}@${RCPT}` });
  w.sink.script(`gone@${RCPT}`, { rcpt: '550 5.1.1 No such user' });
  const before = new Date();
  const sent = [
    await sender.send({ to: [`ann@${RCPT}`] }),
    await sender.send({ to: [`bo@${RCPT}`, `CY@${RCPT}`] }),
    await sender.send({ to: [`gone@${RCPT}`] }),
  ];
  const lastEvent = async (id: string) =>
    (await w.p.request('GET', `/emails/${id}`, { key: team.key })).body.last_event as string;
  await until(async () => (await Promise.all(sent.map(lastEvent))).join() === 'delivered,delivered,bounced', {
    timeoutMs: 120_000,
    what: 'the mta delivering two emails and bouncing one',
  });

  const rows = await activityOf(team.id);
  t.deepEqual(
    rows.map((r) => r.address),
    [`ann@${RCPT}`, `bo@${RCPT}`, `cy@${RCPT}`],
  );
  for (const r of rows) {
    t.true(r.last_delivered_at! >= new Date(before.getTime() - 1000), r.address);
    t.is(r.last_opened_at, null);
    t.is(r.last_clicked_at, null);
  }
  // The time is the recipient's delivered_at, written in the same statement.
  const [recipient] = await w.p.db('email_recipients').where({ email_id: sent[0] }).select('delivered_at');
  t.deepEqual(rows[0].last_delivered_at, recipient.delivered_at);

  const received = { field: 'received', operator: 'within_last_days', days: 1 };
  t.deepEqual(await matching(w.p, team, received), [`Ann@${RCPT}`, `bo@${RCPT}`, `cy@${RCPT}`]);
  t.deepEqual(await matching(w.p, team, { not: received }), [`dee@${RCPT}`, `gone@${RCPT}`]);
  t.deepEqual(await matching(w.p, team, { ...received, operator: 'not_within_last_days' }), [
    `dee@${RCPT}`,
    `gone@${RCPT}`,
  ]);

  // A later delivery moves the time forward.
  const again = await sender.send({ to: [`ann@${RCPT}`] });
  await until(async () => (await lastEvent(again)) === 'delivered', { timeoutMs: 120_000, what: 'the second copy' });
  const [later] = await activityOf(team.id);
  t.true(later.last_delivered_at! > rows[0].last_delivered_at!);
  // Another team's view of the same addresses is empty.
  const other = await w.p.createTeam();
  await createContact(w.p, other, { email: `ann@${RCPT}` });
  t.deepEqual(await matching(w.p, other, received), []);
});

test('noteActivity: opened and clicked per address (any case), each kind the latest time, never moved back', async (t) => {
  const team = await w.p.createTeam();
  const at = (iso: string) => new Date(iso);
  await w.p.db.transaction((trx) =>
    noteActivity(trx, [
      { teamId: team.id, address: 'Pat@Example.test', kind: 'opened', at: at('2026-11-20T10:00:00Z') },
      // The same address twice in one call: the later time wins.
      { teamId: team.id, address: 'pat@example.test', kind: 'opened', at: at('2026-11-21T10:00:00Z') },
      { teamId: team.id, address: 'pat@example.test', kind: 'clicked', at: at('2026-11-20T11:00:00Z') },
      { teamId: team.id, address: 'lou@example.test', kind: 'delivered', at: at('2026-11-19T09:00:00Z') },
    ]),
  );
  // An older open (a late or replayed record) and a newer click.
  await w.p.db.transaction((trx) =>
    noteActivity(trx, [
      { teamId: team.id, address: 'PAT@example.test', kind: 'opened', at: at('2026-11-01T00:00:00Z') },
      { teamId: team.id, address: 'pat@example.test', kind: 'clicked', at: at('2026-11-22T00:00:00Z') },
    ]),
  );
  await w.p.db.transaction((trx) => noteActivity(trx, []));
  t.deepEqual(await activityOf(team.id), [
    {
      address: 'lou@example.test',
      last_delivered_at: at('2026-11-19T09:00:00Z'),
      last_opened_at: null,
      last_clicked_at: null,
    },
    {
      address: 'pat@example.test',
      last_delivered_at: null,
      last_opened_at: at('2026-11-21T10:00:00Z'),
      last_clicked_at: at('2026-11-22T00:00:00Z'),
    },
  ]);
  // In the caller's transaction: rolled back with it.
  await w.p.db
    .transaction(async (trx) => {
      await noteActivity(trx, [{ teamId: team.id, address: 'kim@example.test', kind: 'clicked', at: new Date() }]);
      throw new Error('rolled back');
    })
    .catch(() => undefined);
  t.is((await activityOf(team.id)).length, 2);
});
