// The simulator (CONTRACT, "Sending") as a new team meets it: still in the sandbox, sending from its managed
// domain through POST /emails to each simulator address, delivered by the mta's job. Each ends as its name says
// (last_event through GET /emails/{id}, the recipient's state, the events), and nothing touches the network:
// no connection reaches the SMTP sink and no DNS question names the simulator domain.
import test, { type ExecutionContext } from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { eventsOf, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

/** A new team, left in the sandbox, sends from its managed domain to `to`; answers the email id. */
async function sendFromSandbox(t: ExecutionContext, to: string) {
  const team = await w.p.createTeam();
  const domains = await w.p.request('GET', '/domains', { key: team.key });
  t.is(domains.status, 200, domains.text);
  const managed = domains.body.data.find((d: { managed?: boolean }) => d.managed === true);
  t.truthy(managed, 'the team has a managed domain');
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from: `Team <hello@${managed.name}>`, to, subject: 'Simulated', text: 'Hello' },
  });
  t.is(res.status, 200, res.text);
  const row = await w.p.db('teams').where({ id: team.id }).first();
  t.true(row.sandbox_regions.length > 0, 'still in the sandbox');
  return { team, id: res.body.id as string };
}

/** The events of the email, but email.sent, whose moment belongs to another test. */
async function eventTypes(id: string): Promise<string[]> {
  return (await eventsOf(w.p.db, id)).map((e) => e.type).filter((type) => type !== 'email.sent');
}

async function lastEvent(key: string, id: string): Promise<string> {
  const res = await w.p.request('GET', `/emails/${id}`, { key });
  if (res.status !== 200) throw new Error(`GET /emails/${id} answered ${res.status} ${res.text}`);
  return res.body.last_event;
}

function noNetwork(t: ExecutionContext) {
  t.is(w.sink.stats.connections, 0, 'no connection reached the SMTP sink');
  const domain = w.p.config.SIMULATOR_DOMAIN;
  t.deepEqual(
    w.dns.queries.filter((q) => q.name === domain || q.name.endsWith(`.${domain}`)),
    [],
    'no DNS question about the simulator domain',
  );
}

test('delivered@ is delivered', async (t) => {
  const { team, id } = await sendFromSandbox(t, w.sim('delivered'));
  await processDelivery(w.deps, id);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('delivered'))?.status, 'delivered');
  t.is(await lastEvent(team.key, id), 'delivered');
  t.deepEqual(await eventTypes(id), ['email.delivered']);
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.like(attempt, { outcome: 'delivered', mx_host: null, domain: w.p.config.SIMULATOR_DOMAIN });
  noNetwork(t);
});

test('bounced@ bounces (Permanent/General) and adds no suppression', async (t) => {
  const { team, id } = await sendFromSandbox(t, w.sim('bounced'));
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get(w.sim('bounced')), {
    status: 'bounced',
    enhanced_code: '5.1.1',
    bounce_type: 'Permanent',
    bounce_sub_type: 'General',
  });
  t.is(await lastEvent(team.key, id), 'bounced');
  t.deepEqual(await eventTypes(id), ['email.bounced']);
  const bounced = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.bounced');
  t.like(bounced?.data, { email_id: id, to: [w.sim('bounced')], bounce: { type: 'Permanent', subType: 'General' } });
  t.falsy(await w.p.db('suppressions').where({ team_id: team.id }).first(), 'it keeps bouncing on demand');
  noNetwork(t);
});

test('complained@ is delivered, then complains', async (t) => {
  const { team, id } = await sendFromSandbox(t, w.sim('complained'));
  await processDelivery(w.deps, id);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('complained'))?.status, 'delivered');
  t.is(await lastEvent(team.key, id), 'complained');
  t.deepEqual(await eventTypes(id), ['email.delivered', 'email.complained']);
  const complained = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.complained');
  t.like(complained?.data, { email_id: id, to: [w.sim('complained')] });
  noNetwork(t);
});

test('delayed@ is delayed at once, then delivered at its retry a minute later', async (t) => {
  const { team, id } = await sendFromSandbox(t, w.sim('delayed'));
  const t0 = new Date();
  await processDelivery(w.deps, id, t0);
  const r = (await recipientsOf(w.p.db, id)).get(w.sim('delayed'))!;
  t.is(r.status, 'deferred');
  t.is(r.next_attempt_at?.getTime(), t0.getTime() + 60_000, 'the first retry step: 1 minute');
  t.is(await lastEvent(team.key, id), 'delivery_delayed');
  t.deepEqual(await eventTypes(id), ['email.delivery_delayed']);
  t.is((await processDelivery(w.deps, id, new Date(t0.getTime() + 30_000))).leased, 0, 'not before its retry');

  await processDelivery(w.deps, id, r.next_attempt_at!);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('delayed'))?.status, 'delivered');
  t.is(await lastEvent(team.key, id), 'delivered');
  t.deepEqual(await eventTypes(id), ['email.delivery_delayed', 'email.delivered']);
  const attempts = await w.p.db('delivery_attempts').where({ email_id: id }).orderBy('id');
  t.deepEqual(
    attempts.map((a) => a.outcome),
    ['deferred', 'delivered'],
  );
  noNetwork(t);
});

test('suppressed@ is suppressed, with email.suppressed and no attempt', async (t) => {
  const { team, id } = await sendFromSandbox(t, w.sim('suppressed'));
  await processDelivery(w.deps, id);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('suppressed'))?.status, 'suppressed');
  t.is(await lastEvent(team.key, id), 'suppressed');
  t.deepEqual(await eventTypes(id), ['email.suppressed']);
  const suppressed = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.suppressed');
  t.like(suppressed?.data, { email_id: id, to: [w.sim('suppressed')] });
  t.is((await w.p.db('delivery_attempts').where({ email_id: id })).length, 0);
  noNetwork(t);
});

test('the sandbox still refuses a real address from the managed domain', async (t) => {
  const team = await w.p.createTeam();
  const managed = (await w.p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed?: boolean }) => d.managed === true,
  );
  w.mx('outside-inbox.test');
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from: `hello@${managed.name}`, to: 'someone@outside-inbox.test', subject: 'x', text: 'x' },
  });
  t.is(res.status, 403, res.text);
  t.like(res.body, { name: 'validation_error', details: { recipient: 'someone@outside-inbox.test' } });
  t.true(res.body.details.allowed.includes('simulator'), res.text);
  t.is(Number((await w.p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n), 0);
});
