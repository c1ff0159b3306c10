// The send gate and the lifecycle's refusals: each bad request answered clearly, nothing half-done left behind.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, created, fanOutAndDeliver, type Audience } from './helpers/broadcasts.ts';
import { teamCommands } from '../shared/cli/team-commands.ts';
import { runBroadcast } from '../shared/broadcasts/fanout.ts';
import { fanoutDeps } from './helpers/broadcasts.ts';

let w: MtaWorld;
let a: Audience;
test.before(async () => {
  w = await startMtaWorld();
  w.mx('gate-inbox.test');
  a = await audience(w, 'gate-news.test', [
    { email: 'one@gate-inbox.test', first_name: 'One' },
    { email: 'two@gate-inbox.test' },
  ]);
});
test.after.always(async () => {
  await w?.close();
});

const body = (extra: Record<string, unknown> = {}) => ({
  segment_id: a.segment,
  from: a.from,
  subject: 'Hello {{{FIRST_NAME|there}}}',
  html: '<p>Hi</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
  ...extra,
});
const post = (path: string, b: unknown = {}) => w.p.request('POST', path, { key: a.team.key, body: b });
const draft = (extra: Record<string, unknown> = {}) => created(w, a.team, '/broadcasts', body(extra));

test('bad schedules, a deleted or empty segment, a deleted topic, no body: 422 naming the field, and the draft stays', async (t) => {
  for (const when of ['yesterday at noon', '2020-01-01T00:00:00Z', 'in 31 days', 'soonish']) {
    const id = await draft();
    const res = await post(`/broadcasts/${id}/send`, { scheduled_at: when });
    t.is(res.status, 422, when);
    t.is(res.body.errors?.[0]?.path, 'scheduled_at', when);
    t.is((await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body.status, 'draft');
  }
  const created422 = await post('/broadcasts', body({ name: 'Refused', send: true, scheduled_at: 'in 45 days' }));
  t.is(created422.status, 422);
  t.is(await w.p.db('broadcasts').where({ name: 'Refused' }).first(), undefined, 'a refused create wrote nothing');

  const empty = await created(w, a.team, '/segments', { name: 'Empty' });
  const res = await post(`/broadcasts/${await draft({ segment_id: empty })}/send`);
  t.is(res.status, 422);
  t.regex(res.body.message, /no members/);

  const doomed = await created(w, a.team, '/segments', { name: 'Doomed' });
  const toDoomed = await draft({ segment_id: doomed });
  await w.p.request('DELETE', `/segments/${doomed}`, { key: a.team.key });
  const gone = await post(`/broadcasts/${toDoomed}/send`);
  t.is(gone.status, 422);
  t.regex(gone.body.message, /segment_id.*deleted/);

  const topic = await created(w, a.team, '/topics', { name: 'Gone', default_subscription: 'opt_in' });
  const toTopic = await draft({ topic_id: topic });
  await w.p.request('DELETE', `/topics/${topic}`, { key: a.team.key });
  t.is((await post(`/broadcasts/${toTopic}/send`)).body.errors?.[0]?.path, 'topic_id');

  const bodiless = await post(`/broadcasts/${await draft({ html: null })}/send`);
  t.is(bodiless.status, 422);
  t.is((await post('/broadcasts', { ...body(), segment_id: undefined })).status, 422);
  t.is((await post('/broadcasts', body({ segment_id: '0190a5a0-0000-7000-8000-000000000000' }))).status, 422);
});

test('a failing pre-send check refuses with details.checks unless acknowledged; an unverified domain is 403', async (t) => {
  const id = await draft({ html: '<p>Hi {{{NO_SUCH_PROPERTY}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a>' });
  const refused = await post(`/broadcasts/${id}/send`);
  t.is(refused.status, 422);
  t.is(refused.body.name, 'validation_error');
  t.true(
    refused.body.details.checks.some(
      (c: { code: string; status: string }) => c.code === 'unresolved_variable' && c.status === 'fail',
    ),
  );
  const acknowledged = await post(`/broadcasts/${id}/send`, { acknowledge_checks: true });
  t.is(acknowledged.status, 200);
  const run = await fanOutAndDeliver(w, id, { batchSize: 10 });
  t.is(run.outcome, 'sent');
  const copy = w.sink.deliveredTo('one@gate-inbox.test').at(-1)!;
  t.notRegex(copy.raw.toString(), /NO_SUCH_PROPERTY/, 'an unknown name prints nothing');

  const sandboxed = await w.p.createTeam();
  const domain = await w.sendingDomain(sandboxed, 'gate-sandbox.test');
  const segment = await created(w, sandboxed, '/segments', { name: 'S' });
  await created(w, sandboxed, '/contacts', { email: 'x@gate-inbox.test', audience_id: segment });
  const fromSandbox = await created(w, sandboxed, '/broadcasts', {
    ...body(),
    segment_id: segment,
    from: `S <s@${domain.name}>`,
  });
  const inSandbox = await w.p.request('POST', `/broadcasts/${fromSandbox}/send`, { key: sandboxed.key, body: {} });
  t.is(inSandbox.status, 403);
  t.regex(inSandbox.body.message, /sandbox/);

  const unverified = await draft({ from: 'Someone <x@not-ours.test>' });
  const res = await post(`/broadcasts/${unverified}/send`);
  t.is(res.status, 403);
  t.regex(res.body.message, /not verified/);
});

test('the monthly marketing allowance refuses with 429 marketing_quota_exceeded', async (t) => {
  const b = await audience(w, 'gate-quota.test', [{ email: 'q1@gate-inbox.test' }, { email: 'q2@gate-inbox.test' }]);
  await teamCommands['team set-marketing-allowance'].run(
    w.p.db,
    { team: b.team.id, recipients: '1' } as never,
    w.p.config as never,
  );
  const id = await created(w, b.team, '/broadcasts', { ...body(), segment_id: b.segment, from: b.from });
  const res = await w.p.request('POST', `/broadcasts/${id}/send`, { key: b.team.key, body: {} });
  t.is(res.status, 429);
  t.is(res.body.name, 'marketing_quota_exceeded');
  t.like(res.body.details, { limit: 1, audience: 2 });
  await teamCommands['team set-marketing-allowance'].run(
    w.p.db,
    { team: b.team.id, recipients: '0' } as never,
    w.p.config as never,
  );
  t.is((await w.p.request('POST', `/broadcasts/${id}/send`, { key: b.team.key, body: {} })).status, 200);
});

test('two sends at once: exactly one starts', async (t) => {
  const id = await draft();
  const answers = await Promise.all(Array.from({ length: 6 }, () => post(`/broadcasts/${id}/send`)));
  t.deepEqual(answers.map((r) => r.status).sort(), [200, 422, 422, 422, 422, 422]);
  t.is((await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body.status, 'queued');
});

test('update and delete only drafts; duplicate makes a draft; scheduled waits for its time; another team sees nothing', async (t) => {
  const id = await draft({ name: 'Spring' });
  const patched = await w.p.request('PATCH', `/broadcasts/${id}`, { key: a.team.key, body: { subject: 'Changed' } });
  t.is(patched.status, 200);
  t.is((await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body.subject, 'Changed');
  const scheduled = await post(`/broadcasts/${id}/send`, { scheduled_at: 'in 2 hours' });
  t.is(scheduled.status, 200);
  const got = (await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body;
  t.is(got.status, 'scheduled');
  t.true(Math.abs(Date.parse(got.scheduled_at) - Date.now() - 2 * 3600_000) < 60_000);
  t.is(await runBroadcast(fanoutDeps(w), id), 'not due');
  t.is((await w.p.request('PATCH', `/broadcasts/${id}`, { key: a.team.key, body: { subject: 'x' } })).status, 422);
  t.is((await w.p.request('DELETE', `/broadcasts/${id}`, { key: a.team.key })).status, 422);

  const copy = await post(`/broadcasts/${id}/duplicate`);
  t.is(copy.status, 201);
  t.like((await w.p.request('GET', `/broadcasts/${copy.body.id}`, { key: a.team.key })).body, {
    status: 'draft',
    name: 'Spring (copy)',
    subject: 'Changed',
  });
  t.is((await post(`/broadcasts/${id}/cancel`)).status, 200);
  t.is((await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body.status, 'canceled');
  const deleted = await w.p.request('DELETE', `/broadcasts/${copy.body.id}`, { key: a.team.key });
  t.like(deleted.body, { object: 'broadcast', id: copy.body.id, deleted: true });

  const other = await w.p.createTeam();
  for (const [method, path] of [
    ['GET', `/broadcasts/${id}`],
    ['POST', `/broadcasts/${id}/send`],
    ['POST', `/broadcasts/${id}/cancel`],
    ['GET', `/broadcasts/${id}/recipients?type=sent`],
  ])
    t.is((await w.p.request(method, path, { key: other.key, body: method === 'POST' ? {} : undefined })).status, 404);
});
