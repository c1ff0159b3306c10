// GET /emails/metrics (reference/resend-api.md §1.1): events at chosen instants (around the DST changes of
// Europe/Berlin and America/New_York, in a zone half an hour off UTC) rolled up by the worker's rollup, then asked for
// through the api and the resend SDK: periods in the asked zone, totals, dimensions, filters, rates, and every
// refusal a 422 naming its parameter.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, managedDomain, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { rollUpSettled } from '../shared/email-metrics/rollup.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

interface World {
  team: TestTeam;
  emailId: string;
  domainId: string;
  metrics(query: string): ReturnType<Platform['request']>;
}

/** A team with one email sent now (its email.sent), and `events` of that email at chosen instants, rolled up. */
async function world(events: [type: string, at: string, extra?: Record<string, unknown>][]): Promise<World> {
  const team = await p.createTeam();
  const domain = await managedDomain(p, team);
  const sent = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `shop@${domain.name}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'Hi', text: 'Hi' },
  });
  if (sent.status !== 200) throw new Error(sent.text);
  const emailId = sent.body.id;
  if (events.length)
    await p.db('events').insert(
      events.map(([type, at, extra]) => ({
        id: newId(),
        team_id: team.id,
        type,
        data: { email_id: emailId, to: [`delivered@${p.config.SIMULATOR_DOMAIN}`], ...extra },
        created_at: new Date(at),
      })),
    );
  await rollUpSettled(p.db);
  return {
    team,
    emailId,
    domainId: domain.id,
    metrics: (query) => p.request('GET', `/emails/metrics?${query}`, { key: team.key }),
  };
}

const periods = (body: { data: { period: string; delivered: number }[] }) =>
  body.data.filter((r) => r.delivered).map((r) => [r.period, r.delivered]);

test('Europe/Berlin: the spring day has 23 hours, the autumn day 25, and each event lands in its local day and hour', async (t) => {
  const w = await world([
    ['email.delivered', '2026-03-28T22:59:00Z'], // 23:59 CET, March 28
    ['email.delivered', '2026-03-28T23:00:00Z'], // 00:00 CET, March 29
    ['email.delivered', '2026-03-29T01:30:00Z'], // 03:30 CEST (02:00-03:00 never happened)
    ['email.delivered', '2026-03-29T21:59:59Z'], // 23:59:59 CEST, March 29
    ['email.delivered', '2026-03-29T22:00:00Z'], // 00:00 CEST, March 30
    ['email.delivered', '2026-10-25T00:30:00Z'], // 02:30 CEST, the first 02:30 of October 25
    ['email.delivered', '2026-10-25T01:30:00Z'], // 02:30 CET, the second
  ]);
  const tz = 'timezone=Europe/Berlin&metrics=delivered';
  const daily = await w.metrics(`start_date=2026-03-28&end_date=2026-03-30&dimensions=period&${tz}`);
  t.is(daily.status, 200, daily.text);
  t.like(daily.body, {
    object: 'metrics',
    start_date: '2026-03-27T23:00:00.000Z',
    end_date: '2026-03-30T22:00:00.000Z',
    granularity: 'daily',
    dimensions: ['period'],
    metrics: ['delivered'],
    totals: { delivered: 5 },
  });
  t.deepEqual(
    daily.body.data.map((r: { period: string; delivered: number }) => [r.period, r.delivered]),
    [
      ['2026-03-27T23:00:00.000Z', 1],
      ['2026-03-28T23:00:00.000Z', 3],
      ['2026-03-29T22:00:00.000Z', 1],
    ],
  );
  const spring = await w.metrics(
    `start_date=2026-03-29&end_date=2026-03-29&granularity=hourly&dimensions=period&${tz}`,
  );
  t.is(spring.body.data.length, 23, 'every hour of the day, none missing, none invented');
  t.deepEqual(periods(spring.body), [
    ['2026-03-28T23:00:00.000Z', 1],
    ['2026-03-29T01:00:00.000Z', 1],
    ['2026-03-29T21:00:00.000Z', 1],
  ]);
  t.is(spring.body.data[2].period, '2026-03-29T01:00:00.000Z', '01:00 CET is followed by 03:00 CEST');
  const autumn = await w.metrics(
    `start_date=2026-10-25&end_date=2026-10-25&granularity=hourly&dimensions=period&${tz}`,
  );
  t.is(autumn.body.data.length, 25);
  t.deepEqual(periods(autumn.body), [
    ['2026-10-25T00:00:00.000Z', 1],
    ['2026-10-25T01:00:00.000Z', 1],
  ]);
  const day = await w.metrics(`start_date=2026-10-25&end_date=2026-10-25&dimensions=period&${tz}`);
  t.deepEqual(day.body.data, [{ period: '2026-10-24T22:00:00.000Z', delivered: 2 }]);
  t.is(day.body.end_date, '2026-10-25T23:00:00.000Z', 'a 25-hour day');
});

test('America/New_York: days, Monday weeks and months of local time across both changes; a zone 5:30 off UTC', async (t) => {
  const w = await world([
    ['email.delivered', '2026-03-08T06:59:00Z'], // 01:59 EST, March 8
    ['email.delivered', '2026-03-08T07:00:00Z'], // 03:00 EDT, March 8
    ['email.delivered', '2026-11-01T03:30:00Z'], // 23:30 EDT, Saturday October 31
    ['email.delivered', '2026-11-02T04:30:00Z'], // 23:30 EST, Sunday November 1
    ['email.delivered', '2026-11-02T05:00:00Z'], // 00:00 EST, Monday November 2
  ]);
  const tz = 'timezone=America/New_York&metrics=delivered&dimensions=period';
  const march = await w.metrics(`start_date=2026-03-08&end_date=2026-03-08&${tz}`);
  t.deepEqual(march.body.data, [{ period: '2026-03-08T05:00:00.000Z', delivered: 2 }]);
  t.is(march.body.end_date, '2026-03-09T04:00:00.000Z', 'a 23-hour day');
  const days = await w.metrics(`start_date=2026-10-31&end_date=2026-11-02&${tz}`);
  t.deepEqual(periods(days.body), [
    ['2026-10-31T04:00:00.000Z', 1],
    ['2026-11-01T04:00:00.000Z', 1],
    ['2026-11-02T05:00:00.000Z', 1],
  ]);
  // Every week and month of the range, the empty ones too, each starting at its local midnight on either side of
  // the change (04:00Z in EDT, 05:00Z in EST).
  const weeks = await w.metrics(`start_date=2026-10-19&end_date=2026-11-22&granularity=weekly&${tz}`);
  t.deepEqual(
    weeks.body.data.map((r: { period: string; delivered: number }) => [r.period, r.delivered]),
    [
      ['2026-10-19T04:00:00.000Z', 0],
      ['2026-10-26T04:00:00.000Z', 2],
      ['2026-11-02T05:00:00.000Z', 1],
      ['2026-11-09T05:00:00.000Z', 0],
      ['2026-11-16T05:00:00.000Z', 0],
    ],
  );
  const months = await w.metrics(`start_date=2026-09-01&end_date=2026-11-20&granularity=monthly&${tz}`);
  t.deepEqual(
    months.body.data.map((r: { period: string; delivered: number }) => [r.period, r.delivered]),
    [
      ['2026-09-01T04:00:00.000Z', 0],
      ['2026-10-01T04:00:00.000Z', 1],
      ['2026-11-01T04:00:00.000Z', 2],
    ],
  );
  const berlin = await w.metrics(
    'start_date=2026-02-01&end_date=2026-04-30&granularity=monthly&timezone=Europe/Berlin&dimensions=period&metrics=delivered',
  );
  t.deepEqual(
    berlin.body.data.map((r: { period: string }) => r.period),
    ['2026-01-31T23:00:00.000Z', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
  );
  const kolkata = await world([['email.delivered', '2026-06-01T04:40:00Z']]); // 10:10 IST
  const hour = await kolkata.metrics(
    'start_date=2026-06-01T10:00:00&end_date=2026-06-01T11:00:00&timezone=Asia/Kolkata&granularity=hourly&dimensions=period&metrics=delivered',
  );
  t.deepEqual(hour.body.data, [{ period: '2026-06-01T04:30:00.000Z', delivered: 1 }]);
  t.is(hour.body.start_date, '2026-06-01T04:30:00.000Z');
});

test('every count, the rates, the domain and email dimensions and filters; the resend SDK', async (t) => {
  const w = await world([
    ['email.delivered', '2026-05-01T10:00:00Z'],
    ['email.bounced', '2026-05-01T10:01:00Z', { bounce: { type: 'Permanent' } }],
    ['email.bounced', '2026-05-01T10:02:00Z', { bounce: { type: 'Transient' } }],
    ['email.bounced', '2026-05-01T10:03:00Z', { bounce: { type: 'Undetermined' } }],
    ['email.complained', '2026-05-01T10:04:00Z'],
    ['email.delivery_delayed', '2026-05-01T10:05:00Z'],
    ['email.failed', '2026-05-01T10:06:00Z'],
    ['email.suppressed', '2026-05-01T10:07:00Z'],
    ['email.opened', '2026-05-01T10:08:00Z'],
    ['email.clicked', '2026-05-01T10:09:00Z'],
    ['email.received', '2026-05-01T10:10:00Z', { email_id: newId() }],
    ['email.sent', '2026-05-01T10:11:00Z'],
    ['email.scheduled', '2026-05-01T10:12:00Z'],
    ['domain.updated', '2026-05-01T10:13:00Z'],
  ]);
  const range = 'start_date=2026-05-01&end_date=2026-05-01';
  const all = await w.metrics(range);
  t.is(all.status, 200, all.text);
  t.deepEqual(all.body.totals, {
    received: 1,
    delivered: 1,
    complained: 1,
    suppressed: 1,
    bounced: 3,
    bounced_transient: 1,
    bounced_permanent: 1,
    bounced_undetermined: 1,
    opened: 0,
    clicked: 0,
    unsubscribed: 0,
    delivery_delayed: 1,
    failed: 1,
    sent: 1,
    unique_opened: 1,
    unique_clicked: 1,
  });
  t.is(all.body.data, undefined, 'no dimensions, no data');
  const rates = await w.metrics(
    `${range}&metrics=delivery_rate,open_rate,click_rate,bounce_rate,complaint_rate,unsubscribe_rate`,
  );
  t.deepEqual(rates.body.totals, {
    delivery_rate: 1,
    open_rate: 1,
    click_rate: 1,
    bounce_rate: 3,
    complaint_rate: 1,
    unsubscribe_rate: 0,
  });
  const byDomain = await w.metrics(`${range}&dimensions=domain&metrics=delivered,received`);
  t.deepEqual(byDomain.body.data, [
    { domain_id: w.domainId, domain_name: (await managedDomain(p, w.team)).name, delivered: 1, received: 0 },
    { domain_id: null, domain_name: null, delivered: 0, received: 1 },
  ]);
  const byEmail = await w.metrics(`${range}&dimensions=email,period&metrics=delivered&email_id=${w.emailId}`);
  t.deepEqual(byEmail.body.data, [{ period: '2026-05-01T00:00:00.000Z', email_id: w.emailId, delivered: 1 }]);
  const filtered = await w.metrics(`${range}&domain_id=${w.domainId}&metrics=delivered&metrics=received`);
  t.deepEqual(filtered.body.totals, { received: 0, delivered: 1 }, 'a repeated parameter is a list too');

  const stranger = await world([]);
  t.like((await stranger.metrics(range)).body.totals, { delivered: 0, bounced: 0, received: 0 }, 'scoped by team');

  const resend = new Resend(w.team.key, { baseUrl: p.url } as never);
  const sdk = await resend.emails.metrics({
    startDate: '2026-05-01',
    endDate: '2026-05-01T23:59:59Z',
    timezone: 'UTC',
    granularity: 'hourly',
    metrics: ['delivered', 'bounced', 'bounce_rate'],
    dimensions: ['period', 'domain'],
    domainId: [w.domainId],
  });
  t.is(sdk.error, null, JSON.stringify(sdk.error));
  t.like(sdk.data, { object: 'metrics', granularity: 'hourly', totals: { delivered: 1, bounced: 3, bounce_rate: 3 } });
  t.deepEqual(sdk.data!.data, [
    {
      period: '2026-05-01T10:00:00.000Z',
      domain_id: w.domainId,
      domain_name: byDomain.body.data[0].domain_name,
      delivered: 1,
      bounced: 3,
      bounce_rate: 3,
    },
  ]);
  const defaults = await resend.emails.metrics();
  t.is(defaults.error, null);
  t.is(defaults.data!.totals.sent, 1, 'the email sent now is in the last seven days');
  t.is(Date.parse(defaults.data!.end_date) - Date.parse(defaults.data!.start_date), 6 * 86_400_000);
});

test('every refusal is a 422 naming its parameter; another team sees nothing of this one', async (t) => {
  const w = await world([]);
  const other = await world([]);
  const refusals: [string, string][] = [
    ['start_date=2020-01-01&end_date=2021-03-01&granularity=hourly&dimensions=period', 'granularity'],
    ['start_date=1990-01-01&end_date=2026-01-01&granularity=daily', 'granularity'],
    ['dimensions=email,broadcast', 'dimensions'],
    [`dimensions=broadcast&email_id=${w.emailId}`, 'email_id'],
    [`dimensions=email&broadcast_id=${newId()}`, 'broadcast_id'],
    ['dimensions=tag', 'dimensions'],
    ['metrics=opened,views', 'metrics'],
    ['granularity=yearly', 'granularity'],
    ['granularity=daily&granularity=hourly', 'granularity'],
    ['timezone=Mars/Olympus', 'timezone'],
    ['timezone=%2B02:00', 'timezone'],
    ['start_date=2026-02-30', 'start_date'],
    ['start_date=yesterday', 'start_date'],
    ['end_date=2026-01-01T25:00:00Z', 'end_date'],
    ['start_date=2026-05-02&end_date=2026-05-01', 'start_date'],
    ['start_date=2999-01-01', 'start_date'],
    ['domain_id=not-an-id', 'domain_id'],
    [`domain_id=${other.domainId}`, 'domain_id'],
    [`email_id=${other.emailId}`, 'email_id'],
    [`broadcast_id=${newId()}`, 'broadcast_id'],
    [`email_id=${Array.from({ length: 101 }, () => newId()).join(',')}`, 'email_id'],
  ];
  for (const [query, path] of refusals) {
    const res = await w.metrics(query);
    isError(t, res, 422, 'validation_error');
    t.is(res.body.errors?.[0]?.path, path, `${query}: ${res.text}`);
    t.true(res.body.message.includes(path), res.body.message);
  }
  const edge = await w.metrics('start_date=2025-06-01&end_date=2026-10-25&granularity=hourly&dimensions=period');
  t.is(edge.status, 422, 'more than 10,000 hours');
  const under = await w.metrics('start_date=2026-01-01&end_date=2026-02-01&granularity=hourly&dimensions=period');
  t.is(under.status, 200);
  t.is(under.body.data.length, 32 * 24);
});
