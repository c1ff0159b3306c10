// RESERVED_TLDS_ALLOWED: names under a reserved TLD are refused as a team's domain and as a recipient unless the
// operator allowed that TLD (a test rig, a private network with its own DNS); then they are ordinary names.
import test from 'ava';
import { ConfigError, loadConfig } from '../shared/config.ts';
import { isReservedName } from '../shared/domains/reserved.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain } from './helpers/sending.ts';

let dns: DnsServer;
/** The platform as shipped (nothing allowed) and one that allows `.test`, on one loopback DNS server. */
let strict: Platform;
let allowing: Platform;
test.before(async () => {
  dns = await startDnsServer();
  strict = await startPlatform({ DNS_SERVERS: dns.address, RESERVED_TLDS_ALLOWED: '' });
  allowing = await startPlatform({ DNS_SERVERS: dns.address, RESERVED_TLDS_ALLOWED: 'test' });
  mailDomain(dns, 'inbox-reserved.test');
});
test.after.always(async () => {
  await strict?.close();
  await allowing?.close();
  await dns?.close();
});

test('the setting: empty by default, a comma list of reserved TLDs, anything else a config error', (t) => {
  t.deepEqual(loadConfig({}).RESERVED_TLDS_ALLOWED, []);
  t.deepEqual(loadConfig({ RESERVED_TLDS_ALLOWED: ' test, Example ,' }).RESERVED_TLDS_ALLOWED, ['test', 'example']);
  for (const value of ['com', 'test,net', 'example.com']) {
    const err = t.throws(() => loadConfig({ RESERVED_TLDS_ALLOWED: value }), { instanceOf: ConfigError }, value);
    t.regex(err!.message, /RESERVED_TLDS_ALLOWED\.\d: expected reserved TLDs among test, example, invalid/, value);
  }
});

test('an allowed TLD makes only its own names ordinary: the example second-level names stay reserved', (t) => {
  t.true(isReservedName('shop.test'));
  t.false(isReservedName('shop.test', ['test']));
  t.true(isReservedName('shop.invalid', ['test']));
  t.true(isReservedName('example.com', ['test', 'example']));
  t.true(isReservedName('mail.example.org', ['test']));
  t.false(isReservedName('shop.com', []));
});

test('a domain under .test: refused without the setting, added with it', async (t) => {
  for (const [p, expected] of [
    [strict, 422],
    [allowing, 201],
  ] as const) {
    const team = await p.createTeam();
    const res = await p.request('POST', '/domains', { key: team.key, body: { name: 'Shop-Reserved.test' } });
    t.is(res.status, expected, res.text);
    if (expected === 422) {
      t.is(res.body.name, 'validation_error');
      t.regex(res.body.message, /`shop-reserved\.test` is a reserved name/);
    } else {
      t.is(res.body.name, 'shop-reserved.test');
    }
  }
  const team = await allowing.createTeam();
  const other = await allowing.request('POST', '/domains', { key: team.key, body: { name: 'shop.invalid' } });
  t.is(other.status, 422, 'a reserved TLD not allowed is still refused');
});

test('a recipient under .test: reserved_domain without the setting, checked as any other with it', async (t) => {
  // From the team's managed domain (a platform without the setting has no other name to send from here) to a
  // verified identity, so the reach rules let the recipient through to its checks.
  const send = async (p: Platform, to: string) => {
    const team = await p.createTeam();
    const managed = (await p.request('GET', '/domains', { key: team.key })).body.data[0].name;
    await p.db('team_identities').insert({ team_id: team.id, email: to });
    return p.request('POST', '/emails', { key: team.key, body: { from: `a@${managed}`, to, subject: 'x', text: 'x' } });
  };
  const refused = await send(strict, 'ann@inbox-reserved.test');
  t.is(refused.status, 422);
  t.like(refused.body.details, { reason: 'invalid_recipient', cause: 'reserved_domain' });

  const sent = await send(allowing, 'ann@inbox-reserved.test');
  t.is(sent.status, 200, sent.text);
  const rows = await allowing.db('email_recipients').where({ email_id: sent.body.id });
  t.deepEqual(
    rows.map((r) => [r.address, r.status]),
    [['ann@inbox-reserved.test', 'queued']],
  );
  // Allowed names get the checks of any name: one the DNS knows nothing of receives no mail.
  const nowhere = await send(allowing, 'ann@nowhere-reserved.test');
  t.like(nowhere.body.details, { reason: 'invalid_recipient', cause: 'no_mail' });
  const invalid = await send(allowing, 'ann@shop.invalid');
  t.like(invalid.body.details, { reason: 'invalid_recipient', cause: 'reserved_domain' });
});
