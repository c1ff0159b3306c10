import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import type { ApiRecord } from './helpers/domain-records.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { CHECK_WINDOW_MS } from '../shared/domains/status.ts';
import { open } from '../shared/secrets.ts';
import { secretsKey } from '../shared/secrets.ts';
import { until } from './helpers/wait.ts';

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

/** Publishes the records the API asked for, as a customer would in their DNS panel. */
function publish(domain: string, records: ApiRecord[], only?: (r: ApiRecord) => boolean) {
  for (const r of records.filter(only ?? (() => true))) {
    const name = r.name === '@' ? domain : `${r.name}.${domain}`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    if (r.type === 'TXT') dns.set(name, 'TXT', [r.value]);
    if (r.type === 'CNAME') dns.set(name, 'CNAME', [r.value]);
  }
}

async function create(team: TestTeam, body: Record<string, unknown>) {
  const res = await p.request('POST', '/domains', { key: team.key, body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body;
}

const check = (id: string, now?: Date) => checkDomain(p.db, p.deps.dns, p.config, id, now);

test('create answers the records to publish; the private key is sealed at rest; domain.created is recorded', async (t) => {
  const team = await p.createTeam();
  const body = await create(team, { name: 'Mail.Alpha-Shop.test', region: 'eu-west-1' });
  t.is(body.name, 'mail.alpha-shop.test');
  t.is(body.status, 'not_started');
  t.is(body.region, 'eu-west-1');
  t.is(body.custom_return_path, 'send');
  t.deepEqual(body.capabilities, { sending: 'enabled', receiving: 'disabled' });
  t.false(body.managed);
  t.deepEqual(
    body.records.map((r: ApiRecord) => [r.record, r.name.replace(/^s\d{6}-[a-z0-9]{4}/, 'SEL'), r.type, r.status]),
    [
      ['SPF', 'send', 'MX', 'not_started'],
      ['SPF', 'send', 'TXT', 'not_started'],
      ['DKIM', 'SEL._domainkey', 'TXT', 'not_started'],
    ],
  );
  t.is(body.records[0].value, p.config.PLATFORM_FEEDBACK_HOST);
  t.is(body.records[0].priority, 10);
  t.is(body.records[1].value, `v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all`);

  const key = await p.db('dkim_keys').where({ domain_id: body.id }).first();
  t.false(key.private_key_sealed.includes('PRIVATE KEY'));
  const pem = open(secretsKey(p.config), key.private_key_sealed);
  t.true(pem.startsWith('-----BEGIN PRIVATE KEY-----'));
  t.is(body.records[2].value, `v=DKIM1; k=rsa; p=${key.public_key}`);

  const event = await p.db('events').where({ team_id: team.id, type: 'domain.created' }).first();
  t.is(event.data.id, body.id);
  t.is(event.data.records.length, 3);
});

test('verification: all records published → verified; the domain then reads verified with every record verified', async (t) => {
  const team = await p.createTeam();
  const body = await create(team, { name: 'beta-verified.test' });
  publish('beta-verified.test', body.records);
  const checked = await check(body.id);
  t.is(checked?.status, 'verified');
  const got = await p.request('GET', `/domains/${body.id}`, { key: team.key });
  t.is(got.body.status, 'verified');
  t.true(got.body.records.every((r: ApiRecord) => r.status === 'verified'));
  const updated = await p.db('events').where({ team_id: team.id, type: 'domain.updated' });
  t.is(updated.length, 1);
  t.is(updated[0].data.status, 'verified');
});

test('partial, wrong and spoofed answers never verify; the window closing turns pending into failed', async (t) => {
  const team = await p.createTeam();
  const name = 'gamma-partial.test';
  const body = await create(team, { name });
  const dkim = body.records.find((r: ApiRecord) => r.record === 'DKIM');
  // DKIM right; SPF TXT with something extra; MX pointing elsewhere.
  publish(name, body.records, (r) => r.record === 'DKIM');
  dns.set(`send.${name}`, 'TXT', [`${body.records[1].value} include:evil.example`]);
  dns.set(`send.${name}`, 'MX', [
    { exchange: p.config.PLATFORM_FEEDBACK_HOST, priority: 10 },
    { exchange: 'mx.evil.test', priority: 5 },
  ]);
  let d = await check(body.id);
  t.is(d?.status, 'partially_verified');
  let records = await p.db('domain_records').where({ domain_id: body.id }).orderBy('position');
  t.deepEqual(
    records.map((r) => r.status),
    ['pending', 'pending', 'verified'],
  );

  // A DKIM key that is only a prefix of ours is not ours.
  dns.set(`${dkim.name}.${name}`, 'TXT', [dkim.value.slice(0, -10)]);
  d = await check(body.id);
  t.is(d?.status, 'pending');

  // After 72 hours the window closes: what is not right has failed.
  publish(name, body.records, (r) => r.record === 'DKIM');
  const later = new Date(Date.now() + CHECK_WINDOW_MS + 1000);
  d = await check(body.id, later);
  t.is(d?.status, 'partially_failed');
  t.is(d?.next_check_at, null);
  records = await p.db('domain_records').where({ domain_id: body.id }).orderBy('position');
  t.deepEqual(
    records.map((r) => r.status),
    ['failed', 'failed', 'verified'],
  );
});

test('SERVFAIL and silence are temporary failures, never verified', async (t) => {
  const team = await p.createTeam();
  const name = 'delta-flaky.test';
  const body = await create(team, { name });
  publish(name, body.records);
  dns.fail(`send.${name}`, 'servfail');
  const d = await check(body.id);
  t.is(d?.status, 'partially_verified');
  const records = await p.db('domain_records').where({ domain_id: body.id }).orderBy('position');
  t.deepEqual(
    records.map((r) => r.status),
    ['temporary_failure', 'temporary_failure', 'verified'],
  );
  t.truthy(d?.next_check_at);
  dns.remove(`send.${name}`);
  publish(name, body.records);
  t.is((await check(body.id))?.status, 'verified');
});

test('a re-check whose lookups fail for now leaves a verified domain verified and sending, and looks again within the hour', async (t) => {
  const team = await p.createTeam();
  const name = 'delta-blip.test';
  const body = await create(team, { name });
  publish(name, body.records);
  t.is((await check(body.id))?.status, 'verified');
  const before = await p.db('domain_records').where({ domain_id: body.id }).orderBy('position');
  dns.fail(`send.${name}`, 'servfail');
  const at = new Date(Date.now() + 25 * 3600_000);
  const d = await check(body.id, at);
  t.is(d?.status, 'verified', 'a SERVFAIL says nothing about records found before');
  const after = await p.db('domain_records').where({ domain_id: body.id }).orderBy('position');
  t.deepEqual(
    after.map((r) => [r.status, r.found]),
    before.map((r) => [r.status, r.found]),
  );
  t.is(d?.next_check_at?.getTime(), at.getTime() + 3600_000, 'looked at again within the hour, not the next day');
  dns.remove(`send.${name}`);
  publish(name, body.records);
  const again = await check(body.id, new Date(at.getTime() + 3600_000));
  t.is(again?.status, 'verified');
  t.is(again?.next_check_at?.getTime(), at.getTime() + 3600_000 + 24 * 3600_000);
});

test('a verified domain whose DKIM record is removed is noticed on the next check', async (t) => {
  const team = await p.createTeam();
  const name = 'epsilon-removed.test';
  const body = await create(team, { name });
  publish(name, body.records);
  t.is((await check(body.id))?.status, 'verified');
  const dkim = body.records.find((r: ApiRecord) => r.record === 'DKIM');
  dns.remove(`${dkim.name}.${name}`);
  const d = await check(body.id, new Date(Date.now() + 25 * 3600_000));
  t.is(d?.status, 'partially_failed');
  const events = await p.db('events').where({ team_id: team.id, type: 'domain.updated' }).orderBy('id');
  t.is(events.at(-1).data.status, 'partially_failed');
});

test('every team has a managed domain: verified, no records, and no writes', async (t) => {
  const team = await p.createTeam();
  const list = await p.request('GET', '/domains', { key: team.key });
  t.is(list.body.data.length, 1);
  const managed = list.body.data[0];
  t.true(managed.managed);
  t.is(managed.status, 'verified');
  t.regex(managed.name, new RegExp(`^[a-z]+-[a-z]+-\\d{4}\\.${p.config.MANAGED_DOMAIN_HOST.replace(/\./g, '\\.')}$`));
  const got = await p.request('GET', `/domains/${managed.id}`, { key: team.key });
  t.deepEqual(got.body.records, []);
  for (const [method, path, body] of [
    ['PATCH', `/domains/${managed.id}`, { open_tracking: true }],
    ['DELETE', `/domains/${managed.id}`, undefined],
    ['POST', `/domains/${managed.id}/verify`, undefined],
    ['POST', `/domains/${managed.id}/dkim/rotate`, undefined],
  ] as const) {
    const res = await p.request(method, path, { key: team.key, body });
    t.is(res.status, 422, `${method} ${path}`);
    t.is(res.body.name, 'validation_error');
  }
});

test('bad names are refused with 422 and say why', async (t) => {
  const team = await p.createTeam();
  const bad = [
    'com',
    'co.uk',
    'github.io',
    '192.168.1.1',
    '[::1]',
    'localhost',
    'foo.invalid',
    'example.com',
    'a..b.test',
    `${'a'.repeat(64)}.test`,
    `${'abcdefghi.'.repeat(26)}com`,
    '-bad.test',
    'bad-.test',
    'sp ace.test',
    'a@b.test',
    'http://x.test',
    'x.test:25',
    'x.123',
  ];
  for (const name of bad) {
    const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
    t.is(res.status, 422, name);
    t.is(res.body.name, 'validation_error', name);
    t.is(res.body.errors?.[0]?.path, 'name', name);
  }
  t.is(
    (await p.request('POST', '/domains', { key: team.key, body: { name: 'ok-domain.test', region: 'mars-1' } })).status,
    422,
  );
  const idn = await create(team, { name: 'bücher-shop.test' });
  t.is(idn.name, 'xn--bcher-shop-9db.test');
  const dup = await p.request('POST', '/domains', { key: team.key, body: { name: 'BÜCHER-shop.test.' } });
  t.is(dup.status, 422);
});

test('PATCH adds tracking and receiving records; the return path label of another service is refused with a suggestion', async (t) => {
  const team = await p.createTeam();
  const name = 'zeta-patch.test';
  const body = await create(team, { name });
  const res = await p.request('PATCH', `/domains/${body.id}`, {
    key: team.key,
    body: { click_tracking: true, capabilities: { receiving: 'enabled' }, receiving_host: 'inbound' },
  });
  t.is(res.status, 200);
  t.deepEqual(res.body, { object: 'domain', id: body.id });
  const got = (await p.request('GET', `/domains/${body.id}`, { key: team.key })).body;
  t.is(got.tracking_subdomain, 'links');
  t.is(got.receiving_host, 'inbound');
  t.deepEqual(
    got.records.map((r: ApiRecord) => [r.record, r.name, r.type]).filter((r: string[]) => r[0] !== 'DKIM'),
    [
      ['SPF', 'send', 'MX'],
      ['SPF', 'send', 'TXT'],
      ['Receiving', 'inbound', 'MX'],
      ['Tracking', 'links', 'CNAME'],
      ['TrackingCAA', '@', 'CAA'],
    ],
  );
  publish(name, got.records);
  t.is((await check(body.id))?.status, 'verified', 'no CAA at the apex lets any CA issue');
  dns.set(name, 'CAA', [{ tag: 'issue', value: 'other-ca.example' }]);
  t.is((await check(body.id))?.status, 'partially_failed');

  dns.set(`bounces.${name}`, 'MX', [{ exchange: 'feedback.othermail.test', priority: 10 }]);
  const refused = await p.request('PATCH', `/domains/${body.id}`, {
    key: team.key,
    body: { custom_return_path: 'bounces' },
  });
  t.is(refused.status, 422);
  t.is(refused.body.name, 'invalid_parameter');
  t.like(refused.body.details, {
    reason: 'return_path_in_use',
    label: 'bounces',
    found: { type: 'MX', value: '10 feedback.othermail.test' },
  });
  t.truthy(refused.body.details.suggestion);
  t.not(refused.body.details.suggestion, 'bounces');
});

test('sending enabled by PATCH after a creation without it gets the free return-path check of a creation', async (t) => {
  const team = await p.createTeam();
  const name = 'theta-enable.test';
  // Another service's MX already at send.<name>, the first label a creation would take.
  dns.set(`send.${name}`, 'MX', [{ exchange: 'feedback.othermail.test', priority: 10 }]);
  const created = await create(team, { name, capabilities: { sending: 'disabled', receiving: 'enabled' } });
  const enabled = await p.request('PATCH', `/domains/${created.id}`, {
    key: team.key,
    body: { capabilities: { sending: 'enabled' } },
  });
  t.is(enabled.status, 200, enabled.text);
  const got = (await p.request('GET', `/domains/${created.id}`, { key: team.key })).body;
  t.not(got.custom_return_path, 'send', 'the label in use is not taken');
  t.deepEqual(
    got.records.filter((r: ApiRecord) => r.record === 'SPF').map((r: ApiRecord) => r.name),
    [got.custom_return_path, got.custom_return_path],
  );

  // Naming the label in use while enabling is refused as at creation, with a suggestion; nothing changes.
  const other = await create(team, { name: `b.${name}`, capabilities: { sending: 'disabled', receiving: 'enabled' } });
  dns.set(`send.b.${name}`, 'MX', [{ exchange: 'feedback.othermail.test', priority: 10 }]);
  const refused = await p.request('PATCH', `/domains/${other.id}`, {
    key: team.key,
    body: { capabilities: { sending: 'enabled' }, custom_return_path: 'send' },
  });
  t.is(refused.status, 422, refused.text);
  t.like(refused.body.details, { reason: 'return_path_in_use', label: 'send' });
  t.like((await p.request('GET', `/domains/${other.id}`, { key: team.key })).body, {
    capabilities: { sending: 'disabled' },
  });
});

test('DKIM rotation publishes a new selector and signs with it only once it verifies; the old key retires after a week', async (t) => {
  const team = await p.createTeam();
  const name = 'eta-rotate.test';
  const body = await create(team, { name });
  publish(name, body.records);
  t.is((await check(body.id))?.status, 'verified');
  const rotated = await p.request('POST', `/domains/${body.id}/dkim/rotate`, { key: team.key });
  t.is(rotated.status, 200);
  const fresh = rotated.body.records.find((r: ApiRecord) => r.name === `${rotated.body.selector}._domainkey`);
  t.is(fresh.status, 'not_started');
  t.is((await check(body.id))?.status, 'verified', 'the pending selector does not unverify the domain');
  t.deepEqual(
    (await p.db('dkim_keys').where({ domain_id: body.id }).orderBy('created_at')).map((k) => k.status),
    ['active', 'pending'],
  );

  publish(name, [fresh]);
  await check(body.id);
  const keys = await p.db('dkim_keys').where({ domain_id: body.id }).orderBy('created_at');
  t.deepEqual(
    keys.map((k) => k.status),
    ['retiring', 'active'],
  );
  t.is(keys[1].selector, rotated.body.selector);
  t.true(keys[0].retire_after.getTime() > Date.now() + 6.9 * 24 * 3600_000);

  await check(body.id, new Date(Date.now() + 8 * 24 * 3600_000));
  t.deepEqual(
    (await p.db('dkim_keys').where({ domain_id: body.id }).orderBy('created_at')).map((k) => k.status),
    ['retired', 'active'],
  );
  const records = (await p.request('GET', `/domains/${body.id}`, { key: team.key })).body.records;
  t.deepEqual(
    records.filter((r: ApiRecord) => r.record === 'DKIM').map((r: ApiRecord) => r.name),
    [`${rotated.body.selector}._domainkey`],
  );
});

test('delete removes the domain and records domain.deleted; another team cannot see it', async (t) => {
  const team = await p.createTeam();
  const other = await p.createTeam();
  const body = await create(team, { name: 'theta-delete.test' });
  t.is((await p.request('GET', `/domains/${body.id}`, { key: other.key })).status, 404);
  t.is((await p.request('DELETE', `/domains/${body.id}`, { key: other.key })).status, 404);
  const del = await p.request('DELETE', `/domains/${body.id}`, { key: team.key });
  t.deepEqual(del.body, { object: 'domain', id: body.id, deleted: true });
  t.is((await p.request('GET', `/domains/${body.id}`, { key: team.key })).status, 404);
  t.truthy(await p.db('events').where({ team_id: team.id, type: 'domain.deleted' }).first());
  t.is(await p.db('dkim_keys').where({ domain_id: body.id }).first(), undefined);
});

// Serial: alone in this file's database, so the read waiting on the lock below is this test's own.
test.serial(
  'a domain is read at one moment: a check committed during the read is seen whole or not at all',
  async (t) => {
    const team = await p.createTeam();
    const { id } = await create(team, { name: 'snapshot-read.test' });
    const waiting = `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    // A check's commit held open (domain and records verified), holding domain_records: the read waits between the two.
    const trx = await p.db.transaction();
    try {
      await trx.raw('lock table domain_records in access exclusive mode');
      await trx('domains').where({ id }).update({ status: 'verified' });
      await trx('domain_records').where({ domain_id: id }).update({ status: 'verified' });
      const read = p.request('GET', `/domains/${id}`, { key: team.key });
      await until(async () => (await p.db.raw(waiting)).rows.length > 0, { what: 'the read waiting for the records' });
      await trx.commit();
      const res = await read;
      t.is(res.status, 200, res.text);
      t.is(res.body.status, 'not_started', 'the read began before the commit: all of it as it was then');
      t.deepEqual([...new Set(res.body.records.map((r: ApiRecord) => r.status))], ['not_started']);
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    const after = await p.request('GET', `/domains/${id}`, { key: team.key });
    t.is(after.body.status, 'verified');
    t.deepEqual([...new Set(after.body.records.map((r: ApiRecord) => r.status))], ['verified']);
  },
);
