// Auto-configure against a real RFC 2136 server (BIND's named on loopback), with nsupdate as the "someone
// else" who edits the same zones. The platform resolves through the same named (DNS_SERVERS), so a domain it
// configured goes on to verify.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import * as packet from 'dns-packet';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startNamed, type NamedServer } from './helpers/named.ts';
import { createApp } from '../api/app.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { createResolver, type DnsResolver } from '../shared/dns/resolver.ts';
import { exchangeTcp } from '../shared/dns/update.ts';
import { signMessage, verifyResponse } from '../shared/dns/tsig.ts';
import { isPublicAddress } from '../shared/dns/server-address.ts';
import { planChanges, valueOf, wantedRecords } from '../shared/domains/autoconfigure-plan.ts';
import { txtChunks, type ZoneRecord } from '../shared/dns/wire.ts';
import { loadConfig, type Config } from '../shared/config.ts';
import { open, secretsKey } from '../shared/secrets.ts';

const ZONES: Record<string, string[]> = {
  // A CAA of the customer's own: ours goes next to it.
  'alpha-autoconf.test': ['@ IN CAA 0 issue "other-ca.example"'],
  // A TXT that is not SPF at the return-path label, and the customer's mail provider at the apex.
  'beta-autoconf.test': ['send IN TXT "google-site-verification=abc123"', '@ IN MX 10 mx.mailbox-provider.example.'],
  'gamma-autoconf.test': [],
  'delta-autoconf.test': ['inbound IN CNAME mail.elsewhere.example.'],
  'epsilon-autoconf.test': [],
  'eta-autoconf.test': [],
  'theta-autoconf.test': [],
};

let named: NamedServer;
let p: Platform;
let zone: DnsResolver;

test.before(async () => {
  named = await startNamed(ZONES);
  p = await startPlatform({ DNS_SERVERS: named.address, DNS_UPDATE_ALLOW_PRIVATE: 'true' });
  zone = createResolver({ servers: [named.address], timeoutMs: 1000, tries: 1 });
});
test.after.always(async () => {
  await p?.close();
  await named?.close();
});

interface ApiRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
}

const credential = (extra: Record<string, unknown> = {}) => ({
  server: '127.0.0.1',
  port: named.port,
  key_name: named.key.name,
  secret: named.key.secret,
  ...extra,
});

async function createDomain(team: TestTeam, body: Record<string, unknown>) {
  const res = await p.request('POST', '/domains', { key: team.key, body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body as { id: string; name: string; records: ApiRecord[] };
}

const autoconfigure = (team: TestTeam, id: string, body: unknown) =>
  p.request('POST', `/domains/${id}/auto-configure`, { key: team.key, body });

/** The line auto-configure writes for a record of the API's record list. */
function line(domain: string, r: ApiRecord): string {
  const name = r.name === '@' ? domain : `${r.name}.${domain}`;
  const value = r.type === 'MX' ? `${r.priority} ${r.value}` : r.type === 'TXT' ? `"${r.value}"` : r.value;
  return `${name} ${r.type} ${value}`;
}

/** The api again, on its own port, with some configuration changed (an operator's restart). */
async function withConfig<T>(changes: Partial<Config>, run: (request: typeof p.request) => Promise<T>): Promise<T> {
  const server: Server = createApp({ ...p.deps, config: { ...p.config, ...changes } }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request: typeof p.request = async (method, path, o = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: {
        'user-agent': 'postwerk-tests/1.0',
        'content-type': 'application/json',
        ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
      },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  };
  try {
    return await run(request);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const texts = async (name: string) => {
  const r = await zone.txt(name);
  return r.status === 'ok' ? r.records.sort() : [];
};
const mxs = async (name: string) => {
  const r = await zone.mx(name);
  return r.status === 'ok' ? r.records.map((m) => `${m.priority} ${m.exchange}`).sort() : [];
};

test('creates every record, changes nothing when run again, and the domain then verifies', async (t) => {
  const team = await p.createTeam();
  const name = 'alpha-autoconf.test';
  const domain = await createDomain(team, {
    name,
    click_tracking: true,
    capabilities: { receiving: 'enabled' },
    receiving_host: 'inbound',
  });
  t.deepEqual(
    domain.records.map((r) => r.record),
    ['SPF', 'SPF', 'DKIM', 'Receiving', 'Tracking', 'TrackingCAA'],
  );

  const res = await autoconfigure(team, domain.id, credential());
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, {
    object: 'domain',
    id: domain.id,
    created: domain.records.map((r) => line(name, r)),
    updated: [],
    conflicts: [],
    credential_kept: false,
  });
  t.is(res.body.created[0], `send.${name} MX 10 ${p.config.PLATFORM_FEEDBACK_HOST}`);

  // The zone, read from named: ours, and the customer's CAA still beside ours.
  const dkim = domain.records.find((r) => r.record === 'DKIM')!;
  t.deepEqual(await mxs(`send.${name}`), [`10 ${p.config.PLATFORM_FEEDBACK_HOST}`]);
  t.deepEqual(await texts(`send.${name}`), [`v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all`]);
  t.deepEqual(await texts(`${dkim.name}.${name}`), [dkim.value]);
  t.deepEqual(await mxs(`inbound.${name}`), [`10 ${p.config.PLATFORM_INBOUND_HOST}`]);
  t.like(await zone.cname(`links.${name}`), { status: 'ok', records: [p.config.PLATFORM_TRACKING_HOST] });
  const caa = await zone.caa(name);
  t.deepEqual(caa.status === 'ok' ? caa.records.map((r) => r.issue).sort() : [], [
    'letsencrypt.org',
    'other-ca.example',
  ]);

  const row = await p.db('domains').where({ id: domain.id }).first();
  t.true(row.next_check_at.getTime() <= Date.now(), 'the worker checks the domain at once');
  t.is(
    await p
      .db('domain_dns_changes')
      .where({ domain_id: domain.id, action: 'add' })
      .count('* as n')
      .first()
      .then((r) => Number(r?.n)),
    6,
  );

  const again = await autoconfigure(team, domain.id, credential());
  t.deepEqual([again.body.created, again.body.updated, again.body.conflicts], [[], [], []]);

  // The end: the platform's own verification, through DNS_SERVERS, finds every record.
  const checked = await checkDomain(p.db, p.deps.dns, p.config, domain.id);
  t.is(checked?.status, 'verified');
  const got = await p.request('GET', `/domains/${domain.id}`, { key: team.key });
  t.true(got.body.records.every((r: { status: string }) => r.status === 'verified'));
});

test('a value the platform added and no longer wants is replaced; a record it did not create is never deleted', async (t) => {
  const team = await p.createTeam();
  const name = 'beta-autoconf.test';
  const domain = await createDomain(team, { name });
  const first = await autoconfigure(team, domain.id, credential());
  t.is(first.body.created.length, 3);
  t.deepEqual(await texts(`send.${name}`), [
    'google-site-verification=abc123',
    `v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all`,
  ]);

  // The operator moves the bounce host: our MX at the return path is now wrong, and it is ours to replace.
  const moved = await withConfig({ PLATFORM_FEEDBACK_HOST: 'feedback2.postwerk.localhost' }, (request) =>
    request('POST', `/domains/${domain.id}/auto-configure`, { key: team.key, body: credential() }),
  );
  t.is(moved.status, 200, moved.text);
  t.deepEqual(moved.body.updated, [
    `send.${name} MX 10 feedback2.postwerk.localhost (replaces 10 ${p.config.PLATFORM_FEEDBACK_HOST})`,
  ]);
  t.deepEqual([moved.body.created, moved.body.conflicts], [[], []]);
  t.deepEqual(await mxs(`send.${name}`), ['10 feedback2.postwerk.localhost']);
  const stored = await p.db('domain_records').where({ domain_id: domain.id, type: 'MX' }).first();
  t.is(stored.value, 'feedback2.postwerk.localhost', 'the records the API shows follow what was published');

  // Someone edits our SPF record out of band: the new value is theirs, so it is reported and left alone.
  const theirs = `v=spf1 include:${p.config.PLATFORM_SPF_HOST} include:crm.example ~all`;
  await named.nsupdate(name, [
    `update delete send.${name} TXT "v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all"`,
    `update add send.${name} 300 TXT "${theirs}"`,
  ]);
  const edited = await withConfig({ PLATFORM_FEEDBACK_HOST: 'feedback2.postwerk.localhost' }, (request) =>
    request('POST', `/domains/${domain.id}/auto-configure`, { key: team.key, body: credential() }),
  );
  t.deepEqual(edited.body.conflicts, [
    `send.${name} TXT: found "${theirs}", wanted "v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all"`,
  ]);
  t.deepEqual([edited.body.created, edited.body.updated], [[], []]);

  // Nothing we did not create is gone: the verification TXT, their SPF, the customer's apex MX.
  t.deepEqual(await texts(`send.${name}`), ['google-site-verification=abc123', theirs]);
  t.deepEqual(await mxs(name), ['10 mx.mailbox-provider.example']);
});

test('foreign SPF, MX and CNAME where ours must stand alone are conflicts and stay untouched', async (t) => {
  const team = await p.createTeam();
  const gamma = 'gamma-autoconf.test';
  const g = await createDomain(team, { name: gamma, click_tracking: true });
  t.is(g.records[0].name, 'send');
  await named.nsupdate(gamma, [
    `update add send.${gamma} 300 TXT "v=spf1 include:other-esp.example ~all"`,
    `update add links.${gamma} 300 CNAME tracking.other-esp.example.`,
  ]);
  const res = await autoconfigure(team, g.id, credential());
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.conflicts, [
    `send.${gamma} TXT: found "v=spf1 include:other-esp.example ~all", wanted "v=spf1 include:${p.config.PLATFORM_SPF_HOST} ~all"`,
    `links.${gamma} CNAME: found tracking.other-esp.example, wanted ${p.config.PLATFORM_TRACKING_HOST}`,
  ]);
  // The MX and DKIM had nothing in their way; no CAA at the apex already lets our CA issue, so none is added.
  t.deepEqual(
    res.body.created.map((l: string) =>
      l
        .split(' ')
        .slice(0, 2)
        .join(' ')
        .replace(/^s\d{6}-[a-z0-9]{4}/, 'SEL'),
    ),
    [`send.${gamma} MX`, `SEL._domainkey.${gamma} TXT`],
  );
  t.deepEqual(
    await texts(`send.${gamma}`),
    ['v=spf1 include:other-esp.example ~all'],
    'no second SPF record (RFC 7208 §4.5)',
  );
  t.like(await zone.cname(`links.${gamma}`), { status: 'ok', records: ['tracking.other-esp.example'] });
  t.like(await zone.caa(gamma), { status: 'nodata' });

  const delta = 'delta-autoconf.test';
  const d = await createDomain(team, {
    name: delta,
    capabilities: { receiving: 'enabled' },
    receiving_host: 'inbound',
  });
  await named.nsupdate(delta, [`update add send.${delta} 300 MX 10 bounces.other-esp.example.`]);
  const res2 = await autoconfigure(team, d.id, credential());
  t.deepEqual(res2.body.conflicts, [
    `send.${delta} MX: found 10 bounces.other-esp.example, wanted 10 ${p.config.PLATFORM_FEEDBACK_HOST}`,
    `inbound.${delta} MX: found CNAME mail.elsewhere.example, wanted 10 ${p.config.PLATFORM_INBOUND_HOST}`,
  ]);
  t.deepEqual(await mxs(`send.${delta}`), ['10 bounces.other-esp.example']);
  t.like(await zone.cname(`inbound.${delta}`), { status: 'ok', records: ['mail.elsewhere.example'] });
  t.is(res2.body.created.length, 2, 'the SPF TXT and the DKIM key had nothing in their way');
});

test('a wrong secret, an unknown key, a key without update rights, a dead port: clear 422s, nothing kept', async (t) => {
  const team = await p.createTeam();
  const name = 'epsilon-autoconf.test';
  const domain = await createDomain(team, { name });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [credential({ secret: Buffer.alloc(32, 7).toString('base64') }), 'tsig_bad_signature', /BADSIG.*secret/],
    [credential({ key_name: 'nobody-knows' }), 'tsig_unknown_key', /BADKEY/],
    [
      credential({ key_name: named.readOnlyKey.name, secret: named.readOnlyKey.secret }),
      'update_refused',
      /REFUSED.*allow-update/,
    ],
    [credential({ port: 9 }), 'server_unreachable', /Could not reach/],
    [credential({ algorithm: 'hmac-sha512' }), 'tsig_unknown_key', /BADKEY/],
  ];
  for (const [body, reason, message] of cases) {
    const res = await autoconfigure(team, domain.id, { ...body, keep_credential: true });
    t.is(res.status, 422, `${reason}: ${res.text}`);
    t.is(res.body.name, 'invalid_parameter');
    t.is(res.body.details?.reason, reason);
    t.regex(res.body.message, message);
  }
  // A zone this server does not serve.
  const other = await createDomain(team, { name: 'zeta-autoconf.test' });
  const notServed = await autoconfigure(team, other.id, credential());
  t.is(notServed.body.details?.reason, 'query_refused', notServed.text);

  const missing = await autoconfigure(team, domain.id, {});
  t.is(missing.status, 422);
  t.is(missing.body.name, 'missing_required_field');
  t.deepEqual(
    missing.body.errors.map((e: { path: string }) => e.path),
    ['server', 'key_name', 'secret'],
  );
  const malformed = await autoconfigure(
    team,
    domain.id,
    credential({ secret: 'not base64!', zone: 'example.net', server: 'http://x' }),
  );
  t.is(malformed.status, 422);
  t.deepEqual(malformed.body.errors.map((e: { path: string }) => e.path).sort(), ['secret', 'server', 'zone']);

  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const refused = await autoconfigure(team, managed.id, credential());
  t.is(refused.status, 422);
  t.is(refused.body.name, 'validation_error');

  t.is(await p.db('domain_dns_credentials').where({ domain_id: domain.id }).first(), undefined);
  t.is(await p.db('domain_dns_changes').where({ domain_id: domain.id }).first(), undefined);
  t.deepEqual(await texts(`send.${name}`), []);
});

test('keep_credential: later calls omit it, the secret is sealed at rest and redacted in the log; DELETE forgets it', async (t) => {
  const team = await p.createTeam();
  const name = 'eta-autoconf.test';
  const domain = await createDomain(team, { name });
  // The server by name: resolved through the platform's resolver (ns.<zone> is 127.0.0.1 in named).
  const kept = await autoconfigure(team, domain.id, credential({ server: `ns.${name}`, keep_credential: true }));
  t.is(kept.status, 200, kept.text);
  t.true(kept.body.credential_kept);
  t.is(kept.body.created.length, 3);

  const row = await p.db('domain_dns_credentials').where({ domain_id: domain.id }).first();
  t.like(row, {
    server: `ns.${name}`,
    port: named.port,
    zone: name,
    key_name: named.key.name,
    algorithm: 'hmac-sha256',
  });
  t.false(JSON.stringify(row).includes(named.key.secret));
  t.false(JSON.stringify(row).includes(named.key.secret.replace(/=+$/, '')));
  t.is(open(secretsKey(p.config), row.secret_sealed), named.key.secret);
  const log = await p
    .db('request_logs')
    .where({ team_id: team.id, method: 'POST' })
    .whereLike('endpoint', '%auto-configure')
    .first();
  t.is(log.request_body.secret, '[redacted]');

  // Out of band, our DKIM record goes away; the kept credential puts it back.
  const dkim = domain.records.find((r) => r.record === 'DKIM')!;
  await named.nsupdate(name, [`update delete ${dkim.name}.${name} TXT`]);
  const again = await autoconfigure(team, domain.id, {});
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body.created, [line(name, dkim)]);
  t.true(again.body.credential_kept);

  const del = await p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: team.key });
  t.deepEqual(del.body, { object: 'domain_dns_credential', id: domain.id, deleted: true });
  t.is((await p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: team.key })).status, 404);
  t.is((await autoconfigure(team, domain.id, {})).body.name, 'missing_required_field');
  const other = await p.createTeam();
  t.is((await p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: other.key })).status, 404);
});

test('a server on a private or loopback address is refused unless DNS_UPDATE_ALLOW_PRIVATE is set', async (t) => {
  t.false(loadConfig({}).DNS_UPDATE_ALLOW_PRIVATE);
  const team = await p.createTeam();
  const name = 'theta-autoconf.test';
  const domain = await createDomain(team, { name });
  await withConfig({ DNS_UPDATE_ALLOW_PRIVATE: false }, async (request) => {
    for (const server of ['127.0.0.1', `ns.${name}`, '[::1]', '10.0.0.53']) {
      const res = await request('POST', `/domains/${domain.id}/auto-configure`, {
        key: team.key,
        body: credential({ server }),
      });
      t.is(res.status, 422, `${server}: ${res.text}`);
      t.is(res.body.details?.reason, 'private_address', server);
    }
  });
  t.deepEqual(await texts(`send.${name}`), []);
  for (const ip of ['8.8.8.8', '2606:4700:4700::1111', '1.1.1.1']) t.true(isPublicAddress(ip), ip);
  for (const ip of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-ip',
  ]) {
    t.false(isPublicAddress(ip), ip);
  }
});

test('TSIG: the server accepts our signature, and a tampered, replayed or foreign answer is never trusted', async (t) => {
  const key = {
    name: named.key.name,
    algorithm: 'hmac-sha256' as const,
    secret: Buffer.from(named.key.secret, 'base64'),
  };
  const query = packet.encode({
    type: 'query',
    id: 4242,
    flags: 0,
    questions: [{ name: 'ns.alpha-autoconf.test', type: 'A', class: 'IN' }],
  });
  const { wire, mac } = signMessage(query, key);
  const sent = await exchangeTcp('127.0.0.1', named.port, wire, 2000);
  if (sent.status !== 'ok') return t.fail(sent.error);
  const answer = sent.answer;
  t.deepEqual(verifyResponse(answer, key, mac), { status: 'ok' });
  t.is((packet.decode(answer).answers?.[0] as packet.StringAnswer | undefined)?.data, '127.0.0.1');

  const tampered = Buffer.from(answer);
  const at = tampered.indexOf(Buffer.from([127, 0, 0, 1]));
  tampered[at + 3] = 2; // 127.0.0.2
  t.like(verifyResponse(tampered, key, mac), { status: 'invalid' });
  t.like(verifyResponse(answer, key, Buffer.alloc(32)), { status: 'invalid' }, 'an answer to another request');
  t.like(
    verifyResponse(answer, key, mac, Date.now() + 3600_000),
    { status: 'invalid' },
    'an answer replayed an hour later',
  );
  t.like(verifyResponse(answer, { ...key, secret: Buffer.alloc(32, 1) }, mac), { status: 'invalid' });
  t.like(verifyResponse(query, key, mac), { status: 'invalid', reason: 'the answer is not signed' });
});

test('plan: only our own values are replaced; a foreign DKIM or a second SPF blocks ours; CAA is additive', (t) => {
  const domain = 'plan.example';
  const spf = 'v=spf1 include:_spf.postwerk.localhost ~all';
  const wanted = wantedRecords(domain, [
    { record: 'SPF', name: 'send', type: 'TXT', value: spf },
    { record: 'DKIM', name: 's1._domainkey', type: 'TXT', value: 'v=DKIM1; k=rsa; p=NEW' },
    { record: 'TrackingCAA', name: '@', type: 'CAA', value: '0 issue "letsencrypt.org"' },
  ]);
  const txt = (name: string, value: string): ZoneRecord => ({ name, ttl: 60, type: 'TXT', data: txtChunks(value) });
  const observed = new Map<string, ZoneRecord[]>([
    [
      'send.plan.example TXT',
      [txt('send.plan.example', 'v=spf1 include:_spf.old.example ~all'), txt('send.plan.example', 'hello')],
    ],
    ['s1._domainkey.plan.example TXT', [txt('s1._domainkey.plan.example', 'v=DKIM1; k=rsa; p=SOMEONE')]],
    [
      'plan.example CAA',
      [{ name: 'plan.example', ttl: 60, type: 'CAA', data: { flags: 0, tag: 'issue', value: 'other-ca.example' } }],
    ],
  ]);
  const owned = new Set(['send.plan.example TXT v=spf1 include:_spf.old.example ~all']);
  const plan = planChanges(wanted, observed, owned);
  t.deepEqual(
    plan.actions.map((a) => a.line),
    [
      `send.plan.example TXT "${spf}" (replaces "v=spf1 include:_spf.old.example ~all")`,
      'plan.example CAA 0 issue "letsencrypt.org"',
    ],
  );
  t.deepEqual(plan.conflicts, [
    's1._domainkey.plan.example TXT: found "v=DKIM1; k=rsa; p=SOMEONE", wanted "v=DKIM1; k=rsa; p=NEW"',
  ]);
  t.deepEqual(
    plan.changes.map((c) => `${c.op} ${c.record.type} ${c.record.ttl}`),
    ['delete TXT 60', 'add TXT 60', 'add CAA 60'],
  );
  t.deepEqual(
    plan.changes.filter((c) => c.op === 'delete').map((c) => valueOf(c.record)),
    ['v=spf1 include:_spf.old.example ~all'],
    'only our own value is deleted',
  );
  t.deepEqual(
    plan.prerequisites.map((q) => `${q.kind} ${q.name} ${q.type}`),
    [
      'rrset_equals send.plan.example TXT',
      'rrset_absent send.plan.example CNAME',
      'rrset_equals plan.example CAA',
      'rrset_absent plan.example CNAME',
    ],
  );
});
