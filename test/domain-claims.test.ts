// Domain claims (shared/domains/claims.ts): a team proves control of a domain another team verified by a TXT
// record, and the domain moves. The proof, the claim's life (expiry, supersede, cancel, failure) and the worker's
// re-checks. What holds or refuses a move: test/domain-claims-safety.test.ts.
import test from 'ava';
import { Resend } from 'resend';
import { startClaimWorld, type ClaimWorld } from './helpers/claim-world.ts';
import type { ApiRecord } from './helpers/domain-records.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { CLAIM_TTL_MS } from '../shared/domains/claims.ts';
import { secretsKey } from '../shared/secrets.ts';
import { sweepClaims } from '../worker/domains.ts';

let w: ClaimWorld;
test.before(async () => {
  w = await startClaimWorld();
});
test.after.always(() => w?.close());

test('happy path: the claimer proves control, the domain moves with new keys and records, both teams hear of it', async (t) => {
  const name = 'claim-happy.test';
  const a = await w.holder(name);
  const sending = await w.p.request('POST', '/api-keys', {
    key: a.team.key,
    body: { name: 'sender', permission: 'sending_access', domain_id: a.id },
  });
  t.is(sending.status, 201);
  const b = await w.p.createTeam('Claimer');

  const c = await w.claim(b, { name: 'Claim-Happy.test.', region: 'eu-west-1', click_tracking: true });
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
  t.deepEqual((await w.get(b, c.domain_id)).body, c);
  t.is(
    (await w.p.request('GET', `/domains/${c.domain_id}`, { key: b.key })).status,
    404,
    'no domain before the claim completes',
  );

  w.publishProof(c);
  const done = await w.verify(b, c.domain_id);
  t.is(done.status, 200);
  t.is(done.body.status, 'completed');
  t.is(done.body.record.status, 'verified');
  t.deepEqual((await w.get(b, c.domain_id)).body, done.body);

  // The old team: the domain, its records, its keys and the sending key bound to it are gone.
  const listA = await w.p.request('GET', '/domains', { key: a.team.key });
  t.false(listA.body.data.some((d: { name: string }) => d.name === name));
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 404);
  t.is(await w.p.db('api_keys').where({ id: sending.body.id }).first(), undefined);
  t.is(await w.p.db('domain_records').where({ domain_id: a.id }).first(), undefined);
  const oldKey = await w.p.db('dkim_keys').where({ domain_id: a.id }).first();
  t.is(oldKey, undefined);

  // The new team: the domain under the claim's domain_id, with the claimer's settings, fresh key, new records.
  const got = await w.p.request('GET', `/domains/${c.domain_id}`, { key: b.key });
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
  const row = await w.p.db('domains').where({ id: c.domain_id }).first();
  t.is(row.team_id, b.id);
  t.true(Math.abs(row.next_check_at.getTime() - Date.now()) < 60_000, 'checking is scheduled');

  // Both teams' webhooks hear of it.
  const deletedA = await w.p.db('events').where({ team_id: a.team.id, type: 'domain.deleted' });
  t.deepEqual(
    deletedA.map((e) => e.data.id),
    [a.id],
  );
  const createdB = await w.p.db('events').where({ team_id: b.id, type: 'domain.created' });
  t.deepEqual(
    createdB.map((e) => e.data.id),
    [c.domain_id],
  );
  t.is(createdB[0].data.name, name);

  // The claimer publishes its own records and the domain verifies as any other.
  w.publish(name, got.body.records);
  w.dns.set(`${got.body.records.find((r: ApiRecord) => r.record === 'Tracking').name}.${name}`, 'CNAME', [
    w.p.config.PLATFORM_TRACKING_HOST,
  ]);
  t.is((await checkDomain(w.p.db, w.p.deps.dns, w.p.config, c.domain_id))?.status, 'verified');
  // Verifying a completed claim again answers it as it stands.
  t.is((await w.verify(b, c.domain_id)).body.status, 'completed');
});

test('only the exact TXT value at the claim name proves control; other records beside it are fine', async (t) => {
  const name = 'claim-exact.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  const value: string = c.record.value;
  const wrong: [string, () => void][] = [
    ['a prefix of it', () => w.publishProof(c, [value.slice(0, -4)])],
    ['it with text after', () => w.publishProof(c, [`${value} extra`])],
    ['it inside another value', () => w.publishProof(c, [`x${value}`])],
    ['another token', () => w.publishProof(c, [`postwerk-domain-verification=${'0'.repeat(32)}`])],
    [
      'it at the apex, not the claim name',
      () => {
        w.dns.remove(`_postwerk-claim.${name}`);
        w.dns.set(name, 'TXT', [value]);
      },
    ],
  ];
  for (const [label, arrange] of wrong) {
    arrange();
    const res = await w.verify(b, c.domain_id);
    t.is(res.body.status, 'pending', label);
    t.is(res.body.record.status, 'pending', label);
  }
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  // Split into character-strings (joined, RFC 7208 §3.3) beside an unrelated record: proven.
  w.dns.set(`_postwerk-claim.${name}`, 'TXT', ['google-site-verification=abc', [value.slice(0, 20), value.slice(20)]]);
  t.is((await w.verify(b, c.domain_id)).body.status, 'completed');
});

test('SERVFAIL proves nothing: the claim stays pending with a temporary failure', async (t) => {
  const name = 'claim-servfail.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  w.publishProof(c);
  w.dns.fail(`_postwerk-claim.${name}`, 'servfail');
  const res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'pending');
  t.is(res.body.record.status, 'temporary_failure');
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  w.dns.remove(`_postwerk-claim.${name}`);
  w.publishProof(c);
  t.is((await w.verify(b, c.domain_id)).body.status, 'completed');
});

test('a claim expires after 7 days and then proves nothing', async (t) => {
  const name = 'claim-expiry.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  await w.p
    .db('domain_claims')
    .where({ id: c.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const got = await w.get(b, c.domain_id);
  t.is(got.body.status, 'expired');
  t.is(got.body.record.status, 'failed');
  w.publishProof(c);
  t.is((await w.verify(b, c.domain_id)).body.status, 'expired');
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  // A new claim starts over.
  const again = await w.claim(b, { name });
  t.is(again.status, 'pending');
});

test('a second claim for the same name supersedes the first', async (t) => {
  const name = 'claim-supersede.test';
  await w.holder(name);
  const b = await w.p.createTeam();
  const first = await w.claim(b, { name });
  const second = await w.claim(b, { name });
  t.not(second.domain_id, first.domain_id);
  t.not(second.record.value, first.record.value);
  t.is((await w.get(b, first.domain_id)).body.status, 'superseded');
  t.is((await w.get(b, second.domain_id)).body.status, 'pending');
  // The first token proves nothing any more, for either claim.
  w.publishProof(first);
  t.is((await w.verify(b, first.domain_id)).body.status, 'superseded');
  t.is((await w.verify(b, second.domain_id)).body.status, 'pending');
  t.is(
    (await w.p.db('domain_claims').where({ team_id: b.id, name }).whereIn('status', ['pending', 'blocked'])).length,
    1,
  );
});

test('DELETE /domains/{domain_id} cancels an open claim', async (t) => {
  const name = 'claim-cancel.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  const del = await w.p.request('DELETE', `/domains/${c.domain_id}`, { key: b.key });
  t.is(del.status, 200);
  t.deepEqual(del.body, { object: 'domain', id: c.domain_id, deleted: true });
  t.is((await w.get(b, c.domain_id)).body.status, 'canceled');
  w.publishProof(c);
  t.is((await w.verify(b, c.domain_id)).body.status, 'canceled');
  t.is((await w.p.request('GET', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  t.is((await w.p.request('DELETE', `/domains/${c.domain_id}`, { key: b.key })).status, 404);
});

test('failed: the holder removed the domain before the proof was checked', async (t) => {
  const name = 'claim-vanished.test';
  const a = await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  t.is((await w.p.request('DELETE', `/domains/${a.id}`, { key: a.team.key })).status, 200);
  w.publishProof(c);
  const res = await w.verify(b, c.domain_id);
  t.is(res.body.status, 'failed');
  t.regex(res.body.failure_reason, /POST \/domains/);
  t.is((await w.p.request('GET', `/domains/${c.domain_id}`, { key: b.key })).status, 404);
});

test('the worker re-checks a claim whose claimer asked for verification until it completes', async (t) => {
  const name = 'claim-worker.test';
  await w.holder(name);
  const b = await w.p.createTeam();
  const c = await w.claim(b, { name });
  t.is((await w.verify(b, c.domain_id)).body.status, 'pending');
  const due = (await w.p.db('domain_claims').where({ id: c.id }).first()).next_check_at;
  t.truthy(due);
  w.publishProof(c);
  const ctx = { resolver: w.p.deps.dns, hosts: w.p.config, secrets: secretsKey(w.p.config) };
  await sweepClaims(w.p.db, ctx, w.p.deps.log, new Date(due.getTime() - 1000));
  t.is((await w.get(b, c.domain_id)).body.status, 'pending', 'not checked before it is due');
  t.true((await sweepClaims(w.p.db, ctx, w.p.deps.log, new Date(due.getTime() + 1))) >= 1);
  t.is((await w.get(b, c.domain_id)).body.status, 'completed');
});

test("the official SDK's domains.claims: create with its camelCase options, get, verify until completed", async (t) => {
  const name = 'claim-sdk.test';
  await w.holder(name);
  const b = await w.p.createTeam('SDK claimer');
  const resend = new Resend(b.key, { baseUrl: w.p.url } as never);
  const created = await resend.domains.claims.create({ name, region: 'eu-west-1', openTracking: true });
  t.is(created.error, null, JSON.stringify(created.error));
  const c = created.data!;
  t.like(c, { object: 'domain_claim', name, status: 'pending', region: 'eu-west-1' });
  const domainId = c.domain_id!;
  t.deepEqual((await resend.domains.claims.get(domainId)).data, c);
  t.is((await resend.domains.claims.verify(domainId)).data?.status, 'pending', 'nothing published yet');
  w.publishProof({ name: c.name, record: c.record as unknown as ApiRecord });
  const done = await resend.domains.claims.verify(domainId);
  t.is(done.error, null, JSON.stringify(done.error));
  t.is(done.data?.status, 'completed');
  const domain = await resend.domains.get(domainId);
  t.like(domain.data, { id: domainId, name, open_tracking: true }, "the SDK's openTracking reached the claim");
});
