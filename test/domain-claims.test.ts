import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { CLAIM_TTL_MS } from '../shared/domains/claims.ts';
import { CLAIM_GRACE_MS } from '../shared/domains/claim-safety.ts';
import { secretsKey } from '../shared/secrets.ts';
import { sweepClaims } from '../worker/domains.ts';

let p: Platform;
let dns: DnsServer;
test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

interface ApiRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
  status: string;
}

const DAY = 24 * 3600_000;

function publish(domain: string, records: ApiRecord[]) {
  for (const r of records) {
    const name = r.name === '@' ? domain : `${r.name}.${domain}`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    if (r.type === 'TXT') dns.set(name, 'TXT', [r.value]);
  }
}

/** Moves every trace of the holder's use of its domain two days back: past the grace period and activity window. */
async function age(domainId: string) {
  const then = new Date(Date.now() - 2 * DAY);
  await p.db('domains').where({ id: domainId }).update({ created_at: then, verified_at: then, updated_at: then });
  const domain = await p.db('domains').where({ id: domainId }).first();
  await p.db('request_logs').where({ team_id: domain.team_id }).update({ created_at: then });
}

/** A team holding `name`, verified through its DNS records the way a customer gets there. */
async function holder(
  name: string,
  { aged = true } = {},
): Promise<{ team: TestTeam; id: string; records: ApiRecord[] }> {
  const team = await p.createTeam('Holder');
  const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  publish(name, res.body.records);
  const checked = await checkDomain(p.db, p.deps.dns, p.config, res.body.id);
  if (checked?.status !== 'verified') throw new Error(`holder domain not verified: ${checked?.status}`);
  if (aged) await age(res.body.id);
  return { team, id: res.body.id, records: res.body.records };
}

async function claim(team: TestTeam, body: Record<string, unknown>) {
  const res = await p.request('POST', '/domains/claim', { key: team.key, body });
  if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${res.text}`);
  return res.body;
}

const publishProof = (c: { name: string; record: ApiRecord }, values: string[] = [c.record.value]) =>
  dns.set(`${c.record.name}.${c.name}`, 'TXT', values);

const verify = (team: TestTeam, domainId: string) =>
  p.request('POST', `/domains/${domainId}/claim/verify`, { key: team.key });
const get = (team: TestTeam, domainId: string) => p.request('GET', `/domains/${domainId}/claim`, { key: team.key });

test('happy path: the claimer proves control, the domain moves with new keys and records, both teams hear of it', async (t) => {
  const name = 'claim-happy.test';
  const a = await holder(name);
  const sending = await p.request('POST', '/api-keys', {
    key: a.team.key,
    body: { name: 'sender', permission: 'sending_access', domain_id: a.id },
  });
  t.is(sending.status, 201);
  const b = await p.createTeam('Claimer');

  const c = await claim(b, { name: 'Claim-Happy.test.', region: 'eu-west-1', click_tracking: true });
  t.is(c.object, 'domain_claim');
  t.is(c.name, name);
  t.is(c.status, 'pending');
  t.is(c.region, 'eu-west-1');
  t.regex(c.domain_id, /^[0-9a-f-]{36}$/);
  t.not(c.domain_id, a.id);
  t.not(c.id, c.domain_id);
  t.like(c.record, { record: 'Claim', name: '_postwerk-claim', type: 'TXT', ttl: 'Auto', status: 'not_started' });
  t.regex(c.record.value, /^postwerk-domain-verification=[0-9a-f]{32}$/);
  t.is(c.blocked_reason, null);
  t.is(c.failure_reason, null);
  t.is(new Date(c.expires_at).getTime() - new Date(c.created_at).getTime(), CLAIM_TTL_MS);
  t.deepEqual((await get(b, c.domain_id)).body, c);
  t.is(
    (await p.request('GET', `/domains/${c.domain_id}`, { key: b.key })).status,
    404,
    'no domain before the claim completes',
  );

  publishProof(c);
  const done = await verify(b, c.domain_id);
  t.is(done.status, 200);
  t.is(done.body.status, 'completed');
  t.is(done.body.record.status, 'verified');
  t.deepEqual((await get(b, c.domain_id)).body, done.body);

  // The old team: the domain, its records, its keys and the sending key bound to it are gone.
  const listA = await p.request('GET', '/domains', { key: a.team.key });
  t.false(listA.body.data.some((d: { name: string }) => d.name === name));
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 404);
  t.is(await p.db('api_keys').where({ id: sending.body.id }).first(), undefined);
  t.is(await p.db('domain_records').where({ domain_id: a.id }).first(), undefined);
  const oldKey = await p.db('dkim_keys').where({ domain_id: a.id }).first();
  t.is(oldKey, undefined);

  // The new team: the domain under the claim's domain_id, with the claimer's settings, fresh key, new records.
  const got = await p.request('GET', `/domains/${c.domain_id}`, { key: b.key });
  t.is(got.status, 200);
  t.like(got.body, {
    id: c.domain_id,
    name,
    status: 'not_started',
    region: 'eu-west-1',
    click_tracking: true,
    tracking_subdomain: 'links',
  });
  const dkimA = a.records.find((r) => r.record === 'DKIM')!;
  const dkimB = got.body.records.find((r: ApiRecord) => r.record === 'DKIM');
  t.not(dkimB.name, dkimA.name);
  t.not(dkimB.value, dkimA.value);
  t.true(got.body.records.some((r: ApiRecord) => r.record === 'Tracking'));
  const row = await p.db('domains').where({ id: c.domain_id }).first();
  t.is(row.team_id, b.id);
  t.true(Math.abs(row.next_check_at.getTime() - Date.now()) < 60_000, 'checking is scheduled');

  // Both teams' webhooks hear of it.
  const deletedA = await p.db('events').where({ team_id: a.team.id, type: 'domain.deleted' });
  t.deepEqual(
    deletedA.map((e) => e.data.id),
    [a.id],
  );
  const createdB = await p.db('events').where({ team_id: b.id, type: 'domain.created' });
  t.deepEqual(
    createdB.map((e) => e.data.id),
    [c.domain_id],
  );
  t.is(createdB[0].data.name, name);

  // The claimer publishes its own records and the domain verifies as any other.
  publish(name, got.body.records);
  dns.set(`${got.body.records.find((r: ApiRecord) => r.record === 'Tracking').name}.${name}`, 'CNAME', [
    p.config.PLATFORM_TRACKING_HOST,
  ]);
  t.is((await checkDomain(p.db, p.deps.dns, p.config, c.domain_id))?.status, 'verified');
  // Verifying a completed claim again answers it as it stands.
  t.is((await verify(b, c.domain_id)).body.status, 'completed');
});

test('only the exact TXT value at the claim name proves control; other records beside it are fine', async (t) => {
  const name = 'claim-exact.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  const value: string = c.record.value;
  const wrong: [string, () => void][] = [
    ['a prefix of it', () => publishProof(c, [value.slice(0, -4)])],
    ['it with text after', () => publishProof(c, [`${value} extra`])],
    ['it inside another value', () => publishProof(c, [`x${value}`])],
    ['another token', () => publishProof(c, [`postwerk-domain-verification=${'0'.repeat(32)}`])],
    [
      'it at the apex, not the claim name',
      () => {
        dns.remove(`_postwerk-claim.${name}`);
        dns.set(name, 'TXT', [value]);
      },
    ],
  ];
  for (const [label, arrange] of wrong) {
    arrange();
    const res = await verify(b, c.domain_id);
    t.is(res.body.status, 'pending', label);
    t.is(res.body.record.status, 'pending', label);
  }
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  // Split into character-strings (joined, RFC 7208 §3.3) beside an unrelated record: proven.
  dns.set(`_postwerk-claim.${name}`, 'TXT', ['google-site-verification=abc', [value.slice(0, 20), value.slice(20)]]);
  t.is((await verify(b, c.domain_id)).body.status, 'completed');
});

test('SERVFAIL proves nothing: the claim stays pending with a temporary failure', async (t) => {
  const name = 'claim-servfail.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  publishProof(c);
  dns.fail(`_postwerk-claim.${name}`, 'servfail');
  const res = await verify(b, c.domain_id);
  t.is(res.body.status, 'pending');
  t.is(res.body.record.status, 'temporary_failure');
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  dns.remove(`_postwerk-claim.${name}`);
  publishProof(c);
  t.is((await verify(b, c.domain_id)).body.status, 'completed');
});

test('a claim expires after 7 days and then proves nothing', async (t) => {
  const name = 'claim-expiry.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  await p
    .db('domain_claims')
    .where({ id: c.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const got = await get(b, c.domain_id);
  t.is(got.body.status, 'expired');
  t.is(got.body.record.status, 'failed');
  publishProof(c);
  t.is((await verify(b, c.domain_id)).body.status, 'expired');
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  // A new claim starts over.
  const again = await claim(b, { name });
  t.is(again.status, 'pending');
});

test('grace_period: a freshly verified domain, or one that just arrived by a claim, is not moved the same day', async (t) => {
  const name = 'claim-grace.test';
  const a = await holder(name, { aged: false });
  const b = await p.createTeam();
  const c = await claim(b, { name });
  publishProof(c);
  const blocked = await verify(b, c.domain_id);
  t.is(blocked.body.status, 'blocked');
  t.is(blocked.body.blocked_reason, 'grace_period');
  t.is(blocked.body.record.status, 'verified');
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  const row = await p.db('domain_claims').where({ id: c.id }).first();
  const verifiedAt = (await p.db('domains').where({ id: a.id }).first()).verified_at.getTime();
  t.true(
    Math.abs(row.next_check_at.getTime() - (verifiedAt + CLAIM_GRACE_MS)) < 1000,
    're-checked when the grace period ends',
  );

  await age(a.id);
  const done = await verify(b, c.domain_id);
  t.is(done.body.status, 'completed');
  t.is(done.body.blocked_reason, null);

  // A third team proving control too cannot take it from the claimer on the day it arrived.
  const third = await p.createTeam();
  await p.db('domains').where({ id: c.domain_id }).update({ status: 'verified' });
  const c3 = await claim(third, { name });
  publishProof(c3, [c.record.value, c3.record.value]);
  const held = await verify(third, c3.domain_id);
  t.is(held.body.status, 'blocked');
  t.is(held.body.blocked_reason, 'grace_period');
});

test('recent_owner_activity: a write on the domain or a send with a key bound to it holds the move for a day', async (t) => {
  const name = 'claim-activity.test';
  const a = await holder(name);
  const b = await p.createTeam();
  // Reads are not activity.
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  const c = await claim(b, { name });
  publishProof(c);

  t.is((await p.request('PATCH', `/domains/${a.id}`, { key: a.team.key, body: { open_tracking: true } })).status, 200);
  let res = await verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'recent_owner_activity');

  // The write is a day old now; the team then uses a sending key bound to the domain.
  await age(a.id);
  const sending = await p.request('POST', '/api-keys', {
    key: a.team.key,
    body: { name: 'sender', permission: 'sending_access', domain_id: a.id },
  });
  await p.request('POST', '/emails', { key: sending.body.token, body: {} });
  res = await verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'recent_owner_activity');

  await p
    .db('api_keys')
    .where({ id: sending.body.id })
    .update({ last_used_at: new Date(Date.now() - 2 * DAY) });
  await age(a.id);
  res = await verify(b, c.domain_id);
  t.is(res.body.status, 'completed');
  t.is(res.body.blocked_reason, null);
});

test("pending_scheduled_emails: the holder's emails scheduled from the domain hold the move until they are due or canceled", async (t) => {
  const name = 'claim-scheduled.test';
  const a = await holder(name);
  const at = new Date(Date.now() + 3 * 3600_000);
  const sent = await p.request('POST', '/emails', {
    key: a.team.key,
    body: {
      from: `news@${name}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'later',
      text: 'x',
      scheduled_at: at.toISOString(),
    },
  });
  t.is(sent.status, 200, sent.text);
  await age(a.id);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  publishProof(c);

  let res = await verify(b, c.domain_id);
  t.is(res.body.status, 'blocked');
  t.is(res.body.blocked_reason, 'pending_scheduled_emails');
  const row = await p.db('domain_claims').where({ id: c.id }).first();
  t.true(Math.abs(row.next_check_at.getTime() - at.getTime()) < 1000, 're-checked when the last one is due');

  t.is((await p.request('POST', `/emails/${sent.body.id}/cancel`, { key: a.team.key })).status, 200);
  res = await verify(b, c.domain_id);
  t.is(res.body.status, 'completed');
  t.is(res.body.blocked_reason, null);
});

test('a second claim for the same name supersedes the first', async (t) => {
  const name = 'claim-supersede.test';
  await holder(name);
  const b = await p.createTeam();
  const first = await claim(b, { name });
  const second = await claim(b, { name });
  t.not(second.domain_id, first.domain_id);
  t.not(second.record.value, first.record.value);
  t.is((await get(b, first.domain_id)).body.status, 'superseded');
  t.is((await get(b, second.domain_id)).body.status, 'pending');
  // The first token proves nothing any more, for either claim.
  publishProof(first);
  t.is((await verify(b, first.domain_id)).body.status, 'superseded');
  t.is((await verify(b, second.domain_id)).body.status, 'pending');
  t.is(
    (await p.db('domain_claims').where({ team_id: b.id, name }).whereIn('status', ['pending', 'blocked'])).length,
    1,
  );
});

test('DELETE /domains/{domain_id} cancels an open claim', async (t) => {
  const name = 'claim-cancel.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  const del = await p.request('DELETE', `/domains/${c.domain_id}`, { key: b.key });
  t.is(del.status, 200);
  t.deepEqual(del.body, { object: 'domain', id: c.domain_id, deleted: true });
  t.is((await get(b, c.domain_id)).body.status, 'canceled');
  publishProof(c);
  t.is((await verify(b, c.domain_id)).body.status, 'canceled');
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  t.is((await p.request('DELETE', `/domains/${c.domain_id}`, { key: b.key })).status, 404);
});

test('failed: the holder removed the domain before the proof was checked', async (t) => {
  const name = 'claim-vanished.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  t.is((await p.request('DELETE', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  publishProof(c);
  const res = await verify(b, c.domain_id);
  t.is(res.body.status, 'failed');
  t.regex(res.body.failure_reason, /POST \/domains/);
  t.is((await p.request('GET', `/domains/${c.domain_id}`, { key: b.key })).status, 404);
});

test('the worker re-checks a claim whose claimer asked for verification until it completes', async (t) => {
  const name = 'claim-worker.test';
  await holder(name);
  const b = await p.createTeam();
  const c = await claim(b, { name });
  t.is((await verify(b, c.domain_id)).body.status, 'pending');
  const due = (await p.db('domain_claims').where({ id: c.id }).first()).next_check_at;
  t.truthy(due);
  publishProof(c);
  const ctx = { resolver: p.deps.dns, hosts: p.config, secrets: secretsKey(p.config) };
  await sweepClaims(p.db, ctx, p.deps.log, new Date(due.getTime() - 1000));
  t.is((await get(b, c.domain_id)).body.status, 'pending', 'not checked before it is due');
  t.true((await sweepClaims(p.db, ctx, p.deps.log, new Date(due.getTime() + 1))) >= 1);
  t.is((await get(b, c.domain_id)).body.status, 'completed');
});

test("refused claims: nothing to claim, the team's own domain, bad names and settings", async (t) => {
  const b = await p.createTeam();
  const other = await p.createTeam();
  const unverified = await p.request('POST', '/domains', { key: other.key, body: { name: 'claim-unverified.test' } });
  t.is(unverified.status, 201);
  const own = await p.request('POST', '/domains', { key: b.key, body: { name: 'claim-own.test' } });
  t.is(own.status, 201);
  const managed = (await p.request('GET', '/domains', { key: other.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  await holder('claim-settings.test');

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
    const res = await p.request('POST', '/domains/claim', { key: b.key, body });
    t.is(res.status, 422, label);
    t.is(res.body.name, 'validation_error', label);
    if (message) t.regex(res.body.message, message, label);
  }
  t.is(await p.db('domain_claims').where({ team_id: b.id }).first(), undefined);
  // POST /domains says where to go when the name is verified elsewhere.
  const taken = await p.request('POST', '/domains', { key: b.key, body: { name: 'claim-settings.test' } });
  t.is(taken.status, 422);
  t.true(taken.body.claimable);
});

test('another team, the holder included, can neither see, verify nor cancel a claim', async (t) => {
  const name = 'claim-private.test';
  const a = await holder(name);
  const b = await p.createTeam();
  const stranger = await p.createTeam();
  const c = await claim(b, { name });
  publishProof(c);
  for (const team of [a.team, stranger]) {
    t.is((await get(team, c.domain_id)).status, 404);
    const res = await verify(team, c.domain_id);
    t.is(res.status, 404);
    t.is(res.body.name, 'not_found');
    t.is((await p.request('DELETE', `/domains/${c.domain_id}`, { key: team.key })).status, 404);
  }
  t.is((await get(b, c.domain_id)).body.status, 'pending');
  t.is((await p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
});
