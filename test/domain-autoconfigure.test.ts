// Auto-configure against a real RFC 2136 server (BIND's named on loopback), with nsupdate as the "someone
// else" who edits the same zones: the records it creates, replaces and leaves alone. The platform resolves through
// the same named (DNS_SERVERS), so a domain it configured goes on to verify.
import test from 'ava';
import { startAutoconfigureWorld, line, withConfig, type AutoconfigureWorld } from './helpers/autoconfigure.ts';
import { checkDomain } from '../shared/domains/verify.ts';

const ZONES: Record<string, string[]> = {
  // A CAA of the customer's own: ours goes next to it.
  'alpha-autoconf.test': ['@ IN CAA 0 issue "other-ca.example"'],
  // A TXT that is not SPF at the return-path label, and the customer's mail provider at the apex.
  'beta-autoconf.test': ['send IN TXT "google-site-verification=abc123"', '@ IN MX 10 mx.mailbox-provider.example.'],
  'gamma-autoconf.test': [],
  'delta-autoconf.test': ['inbound IN CNAME mail.elsewhere.example.'],
};

let w: AutoconfigureWorld;
test.before(async () => {
  w = await startAutoconfigureWorld(ZONES);
});
test.after.always(() => w?.close());

test('creates every record, changes nothing when run again, and the domain then verifies', async (t) => {
  const team = await w.p.createTeam();
  const name = 'alpha-autoconf.test';
  const domain = await w.createDomain(team, {
    name,
    click_tracking: true,
    capabilities: { receiving: 'enabled' },
    receiving_host: 'inbound',
  });
  t.deepEqual(
    domain.records.map((r) => r.record),
    ['SPF', 'SPF', 'DKIM', 'Receiving', 'Tracking', 'TrackingCAA'],
  );

  const res = await w.autoconfigure(team, domain.id, w.credential());
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, {
    object: 'domain',
    id: domain.id,
    created: domain.records.map((r) => line(name, r)),
    updated: [],
    conflicts: [],
    credential_kept: false,
  });
  t.is(res.body.created[0], `send.${name} MX 10 ${w.p.config.PLATFORM_FEEDBACK_HOST}`);

  // The zone, read from named: ours, and the customer's CAA still beside ours.
  const dkim = domain.records.find((r) => r.record === 'DKIM')!;
  t.deepEqual(await w.mxs(`send.${name}`), [`10 ${w.p.config.PLATFORM_FEEDBACK_HOST}`]);
  t.deepEqual(await w.texts(`send.${name}`), [`v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} ~all`]);
  t.deepEqual(await w.texts(`${dkim.name}.${name}`), [dkim.value]);
  t.deepEqual(await w.mxs(`inbound.${name}`), [`10 ${w.p.config.PLATFORM_INBOUND_HOST}`]);
  t.like(await w.zone.cname(`links.${name}`), { status: 'ok', records: [w.p.config.PLATFORM_TRACKING_HOST] });
  const caa = await w.zone.caa(name);
  t.deepEqual(caa.status === 'ok' ? caa.records.map((r) => r.issue).sort() : [], [
    'letsencrypt.org',
    'other-ca.example',
  ]);

  const row = await w.p.db('domains').where({ id: domain.id }).first();
  t.true(row.next_check_at.getTime() <= Date.now(), 'the worker checks the domain at once');
  t.is(
    await w.p
      .db('domain_dns_changes')
      .where({ domain_id: domain.id, action: 'add' })
      .count('* as n')
      .first()
      .then((r) => Number(r?.n)),
    6,
  );

  const again = await w.autoconfigure(team, domain.id, w.credential());
  t.deepEqual([again.body.created, again.body.updated, again.body.conflicts], [[], [], []]);

  // The end: the platform's own verification, through DNS_SERVERS, finds every record.
  const checked = await checkDomain(w.p.db, w.p.deps.dns, w.p.config, domain.id);
  t.is(checked?.status, 'verified');
  const got = await w.p.request('GET', `/domains/${domain.id}`, { key: team.key });
  t.true(got.body.records.every((r: { status: string }) => r.status === 'verified'));
});

test('a value the platform added and no longer wants is replaced; a record it did not create is never deleted', async (t) => {
  const team = await w.p.createTeam();
  const name = 'beta-autoconf.test';
  const domain = await w.createDomain(team, { name });
  const first = await w.autoconfigure(team, domain.id, w.credential());
  t.is(first.body.created.length, 3);
  t.deepEqual(await w.texts(`send.${name}`), [
    'google-site-verification=abc123',
    `v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} ~all`,
  ]);

  // The operator moves the bounce host: our MX at the return path is now wrong, and it is ours to replace.
  const moved = await withConfig(w.p, { PLATFORM_FEEDBACK_HOST: 'feedback2.postwerk.localhost' }, (request) =>
    request('POST', `/domains/${domain.id}/auto-configure`, { key: team.key, body: w.credential() }),
  );
  t.is(moved.status, 200, moved.text);
  t.deepEqual(moved.body.updated, [
    `send.${name} MX 10 feedback2.postwerk.localhost (replaces 10 ${w.p.config.PLATFORM_FEEDBACK_HOST})`,
  ]);
  t.deepEqual([moved.body.created, moved.body.conflicts], [[], []]);
  t.deepEqual(await w.mxs(`send.${name}`), ['10 feedback2.postwerk.localhost']);
  const stored = await w.p.db('domain_records').where({ domain_id: domain.id, type: 'MX' }).first();
  t.is(stored.value, 'feedback2.postwerk.localhost', 'the records the API shows follow what was published');

  // Someone edits our SPF record out of band: the new value is theirs, so it is reported and left alone.
  const theirs = `v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} include:crm.example ~all`;
  await w.named.nsupdate(name, [
    `update delete send.${name} TXT "v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} ~all"`,
    `update add send.${name} 300 TXT "${theirs}"`,
  ]);
  const edited = await withConfig(w.p, { PLATFORM_FEEDBACK_HOST: 'feedback2.postwerk.localhost' }, (request) =>
    request('POST', `/domains/${domain.id}/auto-configure`, { key: team.key, body: w.credential() }),
  );
  t.deepEqual(edited.body.conflicts, [
    `send.${name} TXT: found "${theirs}", wanted "v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} ~all"`,
  ]);
  t.deepEqual([edited.body.created, edited.body.updated], [[], []]);

  // Nothing we did not create is gone: the verification TXT, their SPF, the customer's apex MX.
  t.deepEqual(await w.texts(`send.${name}`), ['google-site-verification=abc123', theirs]);
  t.deepEqual(await w.mxs(name), ['10 mx.mailbox-provider.example']);
});

test('foreign SPF, MX and CNAME where ours must stand alone are conflicts and stay untouched', async (t) => {
  const team = await w.p.createTeam();
  const gamma = 'gamma-autoconf.test';
  const g = await w.createDomain(team, { name: gamma, click_tracking: true });
  t.is(g.records[0].name, 'send');
  await w.named.nsupdate(gamma, [
    `update add send.${gamma} 300 TXT "v=spf1 include:other-esp.example ~all"`,
    `update add links.${gamma} 300 CNAME tracking.other-esp.example.`,
  ]);
  const res = await w.autoconfigure(team, g.id, w.credential());
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.conflicts, [
    `send.${gamma} TXT: found "v=spf1 include:other-esp.example ~all", wanted "v=spf1 include:${w.p.config.PLATFORM_SPF_HOST} ~all"`,
    `links.${gamma} CNAME: found tracking.other-esp.example, wanted ${w.p.config.PLATFORM_TRACKING_HOST}`,
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
    await w.texts(`send.${gamma}`),
    ['v=spf1 include:other-esp.example ~all'],
    'no second SPF record (RFC 7208 §4.5)',
  );
  t.like(await w.zone.cname(`links.${gamma}`), { status: 'ok', records: ['tracking.other-esp.example'] });
  t.like(await w.zone.caa(gamma), { status: 'nodata' });

  const delta = 'delta-autoconf.test';
  const d = await w.createDomain(team, {
    name: delta,
    capabilities: { receiving: 'enabled' },
    receiving_host: 'inbound',
  });
  await w.named.nsupdate(delta, [`update add send.${delta} 300 MX 10 bounces.other-esp.example.`]);
  const res2 = await w.autoconfigure(team, d.id, w.credential());
  t.deepEqual(res2.body.conflicts, [
    `send.${delta} MX: found 10 bounces.other-esp.example, wanted 10 ${w.p.config.PLATFORM_FEEDBACK_HOST}`,
    `inbound.${delta} MX: found CNAME mail.elsewhere.example, wanted 10 ${w.p.config.PLATFORM_INBOUND_HOST}`,
  ]);
  t.deepEqual(await w.mxs(`send.${delta}`), ['10 bounces.other-esp.example']);
  t.like(await w.zone.cname(`inbound.${delta}`), { status: 'ok', records: ['mail.elsewhere.example'] });
  t.is(res2.body.created.length, 2, 'the SPF TXT and the DKIM key had nothing in their way');
});
