// What holds or refuses a domain claim: the ownership-safety checks that hold a proven move (grace period, the
// holder's recent activity, its scheduled emails), claims refused outright, and other teams kept out.
import test from 'ava';
import { DAY, startClaimWorld, type ClaimWorld } from './helpers/claim-world.ts';
import { CLAIM_GRACE_MS } from '../shared/domains/claim-safety.ts';

let w: ClaimWorld;
test.before(async () => {
  w = await startClaimWorld();
});
test.after.always(() => w?.close());

test('grace_period: a freshly verified domain, or one that just arrived by a claim, is not moved the same day', async (t) => {
  const name = 'claim-grace.test';
  const a = await w.holder(name, { aged: false });
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  w.publishProof(c);
  const blocked = await w.verify(b, c.domain_id);
  t.is(blocked.body.status, 'blocked');
  t.is(blocked.body.blocked_reason, 'grace_period');
  t.is(blocked.body.record.status, 'verified');
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  const row = await w.p.db('domain_claims').where({ id: c.id }).first();
  const verifiedAt = (await w.p.db('domains').where({ id: a.id }).first()).verified_at.getTime();
  t.true(
    Math.abs(row.next_check_at.getTime() - (verifiedAt + CLAIM_GRACE_MS)) < 1000,
    're-checked when the grace period ends',
  );

  await w.age(a.id);
  const done = await w.verify(b, c.domain_id);
  t.is(done.body.status, 'completed');
  t.is(done.body.blocked_reason, null);

  // A third team proving control too cannot take it from the claimer on the day it arrived.
  const third = await w.p.createTeam();
  await w.p.db('domains').where({ id: c.domain_id }).update({ status: 'verified' });
  const c3 = await w.claim(third, { name });
  w.publishProof(c3, [c.record.value, c3.record.value]);
  const held = await w.verify(third, c3.domain_id);
  t.is(held.body.status, 'blocked');
  t.is(held.body.blocked_reason, 'grace_period');
});

test('recent_owner_activity: a write on the domain or a send with a key bound to it holds the move for a day', async (t) => {
  const name = 'claim-activity.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  // Reads are not activity.
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  const c = await w.claim(b, { name });
  w.publishProof(c);

  t.is(
    (await w.p.request('PATCH', `/domains/${a.id}`, { key: a.team.key, body: { open_tracking: true } })).status,
    200,
  );
  let res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'recent_owner_activity');

  // The write is a day old now; the team then uses a sending key bound to the domain.
  await w.age(a.id);
  const sending = await w.p.request('POST', '/api-keys', {
    key: a.team.key,
    body: { name: 'sender', permission: 'sending_access', domain_id: a.id },
  });
  await w.p.request('POST', '/emails', { key: sending.body.token, body: {} });
  res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'recent_owner_activity');

  await w.p
    .db('api_keys')
    .where({ id: sending.body.id })
    .update({ last_used_at: new Date(Date.now() - 2 * DAY) });
  await w.age(a.id);
  res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'completed');
  t.is(res.body.blocked_reason, null);
});

test("pending_scheduled_emails: the holder's emails scheduled from the domain hold the move until they are due or canceled", async (t) => {
  const name = 'claim-scheduled.test';
  const a = await w.holder(name);
  const at = new Date(Date.now() + 3 * 3600_000);
  const sent = await w.p.request('POST', '/emails', {
    key: a.team.key,
    body: {
      from: `news@${name}`,
      to: `delivered@${w.p.config.SIMULATOR_DOMAIN}`,
      subject: 'later',
      text: 'x',
      scheduled_at: at.toISOString(),
    },
  });
  t.is(sent.status, 200, sent.text);
  await w.age(a.id);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  w.publishProof(c);

  let res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'pending_scheduled_emails');
  const row = await w.p.db('domain_claims').where({ id: c.id }).first();
  t.true(Math.abs(row.next_check_at.getTime() - at.getTime()) < 1000, 're-checked when the last one is due');

  t.is((await w.p.request('POST', `/emails/${sent.body.id}/cancel`, { key: a.team.key })).status, 200);
  res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'completed');
  t.is(res.body.blocked_reason, null);
});

test("refused claims: nothing to claim, the team's own domain, bad names and settings", async (t) => {
  const b = await w.p.createTeam();
  const other = await w.p.createTeam();
  const unverified = await w.p.request('POST', '/domains', { key: other.key, body: { name: 'claim-unverified.test' } });
  t.is(unverified.status, 201);
  const own = await w.p.request('POST', '/domains', { key: b.key, body: { name: 'claim-own.test' } });
  t.is(own.status, 201);
  const managed = (await w.p.request('GET', '/domains', { key: other.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  await w.holder('claim-settings.test');

  const cases: [string, Record<string, unknown>, RegExp?][] = [
    ['verified by nobody', { name: 'claim-unverified.test' }, /POST \/domains/],
    ['known nowhere', { name: 'claim-nowhere.test' }, /POST \/domains/],
    ["the team's own", { name: 'claim-own.test' }, /already/],
    ['a managed domain', { name: managed.name }],
    ['a public suffix', { name: 'co.uk' }],
    ['a reserved name', { name: 'foo.invalid' }],
    ['an address', { name: '192.168.1.1' }],
    ['an empty label', { name: 'a..b.test' }],
    ['an unknown region', { name: 'claim-settings.test', region: 'mars-1' }],
    ['a bad label', { name: 'claim-settings.test', custom_return_path: 'not a label' }],
    [
      'tracking on the return path',
      { name: 'claim-settings.test', custom_return_path: 'send', tracking_subdomain: 'send' },
    ],
  ];
  for (const [label, body, message] of cases) {
    const res = await w.p.request('POST', '/domains/claim', { key: b.key, body });
    t.is(res.status, 422, label);
    t.is(res.body.name, 'validation_error', label);
    if (message) t.regex(res.body.message, message, label);
  }
  t.is(await w.p.db('domain_claims').where({ team_id: b.id }).first(), undefined);
  // POST /domains says where to go when the name is verified elsewhere.
  const taken = await w.p.request('POST', '/domains', { key: b.key, body: { name: 'claim-settings.test' } });
  t.is(taken.status, 422);
  t.true(taken.body.claimable);
});

test('another team, the holder included, can neither see, verify nor cancel a claim', async (t) => {
  const name = 'claim-private.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const stranger = await w.p.createTeam();
  const c = await w.claim(b, { name });
  w.publishProof(c);
  for (const team of [a.team, stranger]) {
    t.is((await w.get(team, c.domain_id)).status, 404);
    const res = await w.verify(team, c.domain_id);
    t.is(res.status, 404);
    t.is(res.body.name, 'not_found');
    t.is((await w.p.request('DELETE', `/domains/${c.domain_id}`, { key: team.key })).status, 404);
  }
  t.is((await w.get(b, c.domain_id)).body.status, 'pending');
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
});
