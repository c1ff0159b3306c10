// Billable contacts and the allowance (`contacts_included`): set with the operator CLI, shown on GET /team, enforced
// on the SDK's contacts.create, the audiences alias and import rows alike, never overshot by concurrent creates; the
// period's peak recorded as contacts come and go. The real worker process runs the imports and the peak jobs.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { runCli } from './helpers/cli.ts';
import { createContact, createSegment, createTopic } from './helpers/contacts.ts';
import { imported } from './helpers/imports.ts';
import { until } from './helpers/wait.ts';
import { periodStart } from '../shared/contacts/billable.ts';

let p: Platform;
let worker: EntryProcess;
test.before(async () => {
  p = await startPlatform();
  worker = startEntry('worker/main.ts', p.config);
  await worker.logged('worker.started', 60_000);
});
test.after.always(async () => {
  await worker?.stop();
  await p?.close();
});

const cli = (...args: string[]) => runCli({ DATABASE_URL: p.config.DATABASE_URL, ENV_FILE: 'none' }, ...args);

async function limitedTeam(included: number): Promise<TestTeam> {
  const team = await p.createTeam('Allowance');
  // A topic everyone is subscribed to by default: every new subscribed contact is billable.
  await createTopic(p, team, { name: 'Everything', default_subscription: 'opt_in' });
  const run = await cli('team', 'set-contacts-included', '--team', team.id, '--contacts', String(included));
  if (run.code !== 0) throw new Error(run.stderr);
  return team;
}

const usage = async (team: TestTeam) => (await p.request('GET', '/team', { key: team.key })).body.contacts;

test('the CLI sets contacts_included (0 = unlimited, the default); GET /team shows it with the counts', async (t) => {
  const team = await p.createTeam('CLI');
  t.deepEqual(await usage(team), {
    contacts_included: 0,
    billable_contacts: 0,
    peak_billable_contacts: 0,
    period_start: periodStart(new Date()),
  });
  const set = await cli('team', 'set-contacts-included', '--team', team.id, '--contacts', '1000');
  t.is(set.code, 0, set.stderr);
  t.deepEqual(JSON.parse(set.stdout), { team: { id: team.id, contacts_included: 1000 } });
  t.is((await usage(team)).contacts_included, 1000);
  for (const bad of ['-1', 'lots', '1.5', '']) {
    const refused = await cli('team', 'set-contacts-included', '--team', team.id, '--contacts', bad);
    t.is(refused.code, 2, bad);
    t.regex(refused.stderr, bad === '' ? /--contacts/ : /--contacts is a whole number/);
  }
  t.is((await usage(team)).contacts_included, 1000);
  const help = await cli('team', 'set-contacts-included', '--help');
  t.regex(help.stdout, /--contacts N/);
});

test("the SDK's contacts.create is refused past the allowance (403 naming contacts_included); not billable ones are not", async (t) => {
  const team = await limitedTeam(2);
  const resend = new Resend(team.key, { baseUrl: p.url } as never);
  for (const email of ['a@example.com', 'b@example.com']) {
    const res = await resend.contacts.create({ email });
    t.is(res.error, null, JSON.stringify(res.error));
  }
  const past = await resend.contacts.create({ email: 'c@example.com' });
  t.is(past.data, null);
  t.like(past.error, { statusCode: 403, name: 'validation_error' });
  t.regex(past.error!.message, /contacts_included = 2/);
  const raw = await p.request('POST', '/contacts', { key: team.key, body: { email: 'c@example.com' } });
  t.like(raw.body, { statusCode: 403, details: { contacts_included: 2, billable_contacts: 2 } });
  t.is(
    await p
      .db('contacts')
      .where({ team_id: team.id })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r!.n)),
    2,
  );

  // Not billable, so not refused: unsubscribed, or suppressed.
  t.is((await resend.contacts.create({ email: 'quiet@example.com', unsubscribed: true })).error, null);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'bounced@example.com' } });
  t.is((await resend.contacts.create({ email: 'bounced@example.com' })).error, null);
  // The legacy audiences path is the same create.
  const audience = await createSegment(p, team, 'Audience');
  const alias = await p.request('POST', `/audiences/${audience}/contacts`, {
    key: team.key,
    body: { email: 'd@example.com' },
  });
  t.like(alias, { status: 403, body: { name: 'validation_error' } });
  t.like(await usage(team), { contacts_included: 2, billable_contacts: 2, peak_billable_contacts: 2 });

  // Room again once a billable contact goes (here: unsubscribes).
  t.is((await resend.contacts.update({ email: 'a@example.com', unsubscribed: true })).error, null);
  t.is((await resend.contacts.create({ email: 'c@example.com' })).error, null);
});

test('concurrent creates never overshoot the allowance', async (t) => {
  const team = await limitedTeam(5);
  const answers = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      p.request('POST', '/contacts', { key: team.key, body: { email: `racer${i}@example.com` } }),
    ),
  );
  const statuses = answers.map((a) => a.status).sort();
  t.is(statuses.filter((s) => s === 201).length, 5, JSON.stringify(statuses));
  t.is(statuses.filter((s) => s === 403).length, 19);
  t.like(await usage(team), { billable_contacts: 5, peak_billable_contacts: 5 });
});

test('import rows past the allowance fail with the reason; the rows that fit, and the not billable ones, are imported', async (t) => {
  const team = await limitedTeam(3);
  await createContact(p, team, { email: 'existing@example.com' });
  const csv = [
    'email,unsubscribed',
    'one@example.com,',
    'existing@example.com,',
    'two@example.com,',
    'three@example.com,',
    'quiet@example.com,true',
    'four@example.com,',
  ].join('\n');
  const { result, failures } = await imported(p, team, csv, { on_conflict: 'upsert' });
  t.deepEqual(result.counts, { total: 6, created: 3, updated: 1, skipped: 0, failed: 2 });
  t.deepEqual(
    failures.data.map((f: { row: number; email: string }) => [f.row, f.email]),
    [
      [5, 'three@example.com'],
      [7, 'four@example.com'],
    ],
  );
  t.regex(failures.data[0].reason, /contact allowance is reached \(contacts_included = 3/);
  t.like(await usage(team), { billable_contacts: 3, peak_billable_contacts: 3 });
});

test('the peak: raised as contacts come (on an unlimited team too, by the worker), kept when they go', async (t) => {
  const team = await p.createTeam('Peak');
  await createTopic(p, team, { name: 'News', default_subscription: 'opt_in' });
  for (let i = 0; i < 4; i++) await createContact(p, team, { email: `p${i}@example.com` });
  // No one asked GET /team: the worker's job, a few seconds after the creates, records the peak.
  const recorded = await until(
    async () => {
      const row = await p
        .db('team_contact_peaks')
        .where({ team_id: team.id })
        .first(p.db.raw('period_start::text as period_start'), 'peak');
      return row?.peak === 4 ? row : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'the peak recorded by the worker' },
  );
  t.is(recorded.period_start, periodStart(new Date()));
  for (let i = 0; i < 3; i++) await p.request('DELETE', `/contacts/p${i}@example.com`, { key: team.key });
  t.like(await usage(team), { billable_contacts: 1, peak_billable_contacts: 4 });
  // An opt-out of the only topic makes the last one not billable; the peak stays.
  const topics = (await p.request('GET', '/topics', { key: team.key })).body.data;
  await p.request('PATCH', '/contacts/p3@example.com/topics', {
    key: team.key,
    body: { topics: [{ id: topics[0].id, subscription: 'opt_out' }] },
  });
  t.like(await usage(team), { billable_contacts: 0, peak_billable_contacts: 4 });
  // A team with no topic has no billable contact at all (billable means subscribed to at least one).
  const bare = await p.createTeam('No topics');
  await createContact(p, bare, { email: 'x@example.com' });
  t.like(await usage(bare), { billable_contacts: 0 });
});
