// Auto-configure's refusals and credentials against a real RFC 2136 server (BIND's named on loopback): bad or
// unauthorised TSIG keys and dead servers, the kept credential, servers on private addresses, and the TSIG
// signatures of the exchange itself.
import test from 'ava';
import * as packet from 'dns-packet';
import { startAutoconfigureWorld, line, withConfig, type AutoconfigureWorld } from './helpers/autoconfigure.ts';
import { exchangeTcp } from '../shared/dns/update.ts';
import { signMessage, verifyResponse } from '../shared/dns/tsig.ts';
import { isPublicAddress } from '../shared/dns/server-address.ts';
import { loadConfig } from '../shared/config.ts';
import { open, secretsKey } from '../shared/secrets.ts';

const ZONES: Record<string, string[]> = {
  // The TSIG exchange asks for its ns.
  'alpha-autoconf.test': [],
  'epsilon-autoconf.test': [],
  'eta-autoconf.test': [],
  'theta-autoconf.test': [],
};

let w: AutoconfigureWorld;
test.before(async () => {
  w = await startAutoconfigureWorld(ZONES);
});
test.after.always(() => w?.close());

test('a wrong secret, an unknown key, a key without update rights, a dead port: clear 422s, nothing kept', async (t) => {
  const team = await w.p.createTeam();
  const name = 'epsilon-autoconf.test';
  const domain = await w.createDomain(team, { name });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [w.credential({ secret: Buffer.alloc(32, 7).toString('base64') }), 'tsig_bad_signature', /BADSIG.*secret/],
    [w.credential({ key_name: 'nobody-knows' }), 'tsig_unknown_key', /BADKEY/],
    [
      w.credential({ key_name: w.named.readOnlyKey.name, secret: w.named.readOnlyKey.secret }),
      'update_refused',
      /REFUSED.*allow-update/,
    ],
    [w.credential({ port: 9 }), 'server_unreachable', /Could not reach/],
    [w.credential({ algorithm: 'hmac-sha512' }), 'tsig_unknown_key', /BADKEY/],
  ];
  for (const [body, reason, message] of cases) {
    const res = await w.autoconfigure(team, domain.id, { ...body, keep_credential: true });
    t.is(res.status, 422, `${reason}: ${res.text}`);
    t.is(res.body.name, 'invalid_parameter');
    t.is(res.body.details?.reason, reason);
    t.regex(res.body.message, message);
  }
  // A zone this server does not serve.
  const other = await w.createDomain(team, { name: 'zeta-autoconf.test' });
  const notServed = await w.autoconfigure(team, other.id, w.credential());
  t.is(notServed.body.details?.reason, 'query_refused', notServed.text);

  const missing = await w.autoconfigure(team, domain.id, {});
  t.is(missing.status, 422);
  t.is(missing.body.name, 'missing_required_field');
  t.deepEqual(
    missing.body.errors.map((e: { path: string }) => e.path),
    ['server', 'key_name', 'secret'],
  );
  const malformed = await w.autoconfigure(
    team,
    domain.id,
    w.credential({ secret: 'not base64!', zone: 'example.net', server: 'http://x' }),
  );
  t.is(malformed.status, 422);
  t.deepEqual(malformed.body.errors.map((e: { path: string }) => e.path).sort(), ['secret', 'server', 'zone']);

  const managed = (await w.p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const refused = await w.autoconfigure(team, managed.id, w.credential());
  t.is(refused.status, 422);
  t.is(refused.body.name, 'validation_error');

  t.is(await w.p.db('domain_dns_credentials').where({ domain_id: domain.id }).first(), undefined);
  t.is(await w.p.db('domain_dns_changes').where({ domain_id: domain.id }).first(), undefined);
  t.deepEqual(await w.texts(`send.${name}`), []);
});

test('keep_credential: later calls omit it, the secret is sealed at rest and redacted in the log; DELETE forgets it', async (t) => {
  const team = await w.p.createTeam();
  const name = 'eta-autoconf.test';
  const domain = await w.createDomain(team, { name });
  // The server by name: resolved through the platform's resolver (ns.<zone> is 127.0.0.1 in named).
  const kept = await w.autoconfigure(team, domain.id, w.credential({ server: `ns.${name}`, keep_credential: true }));
  t.is(kept.status, 200, kept.text);
  t.true(kept.body.credential_kept);
  t.is(kept.body.created.length, 3);

  const row = await w.p.db('domain_dns_credentials').where({ domain_id: domain.id }).first();
  t.like(row, {
    server: `ns.${name}`,
    port: w.named.port,
    zone: name,
    key_name: w.named.key.name,
    algorithm: 'hmac-sha256',
  });
  t.false(JSON.stringify(row).includes(w.named.key.secret));
  t.false(JSON.stringify(row).includes(w.named.key.secret.replace(/=+$/, '')));
  t.is(open(secretsKey(w.p.config), row.secret_sealed), w.named.key.secret);
  const log = await w.p
    .db('request_logs')
    .where({ team_id: team.id, method: 'POST' })
    .whereLike('endpoint', '%auto-configure')
    .first();
  t.is(log.request_body.secret, '[redacted]');

  // Out of band, our DKIM record goes away; the kept credential puts it back.
  const dkim = domain.records.find((r) => r.record === 'DKIM')!;
  await w.named.nsupdate(name, [`update delete ${dkim.name}.${name} TXT`]);
  const again = await w.autoconfigure(team, domain.id, {});
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body.created, [line(name, dkim)]);
  t.true(again.body.credential_kept);

  const del = await w.p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: team.key });
  t.deepEqual(del.body, { object: 'domain_dns_credential', id: domain.id, deleted: true });
  t.is((await w.p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: team.key })).status, 404);
  t.is((await w.autoconfigure(team, domain.id, {})).body.name, 'missing_required_field');
  const other = await w.p.createTeam();
  t.is(
    (await w.p.request('DELETE', `/domains/${domain.id}/auto-configure/credential`, { key: other.key })).status,
    404,
  );
});

test('a server on a private or loopback address is refused unless DNS_UPDATE_ALLOW_PRIVATE is set', async (t) => {
  t.false(loadConfig({}).DNS_UPDATE_ALLOW_PRIVATE);
  const team = await w.p.createTeam();
  const name = 'theta-autoconf.test';
  const domain = await w.createDomain(team, { name });
  await withConfig(w.p, { DNS_UPDATE_ALLOW_PRIVATE: false }, async (request) => {
    for (const server of ['127.0.0.1', `ns.${name}`, '[::1]', '10.0.0.53']) {
      const res = await request('POST', `/domains/${domain.id}/auto-configure`, {
        key: team.key,
        body: w.credential({ server }),
      });
      t.is(res.status, 422, `${server}: ${res.text}`);
      t.is(res.body.details?.reason, 'private_address', server);
    }
  });
  t.deepEqual(await w.texts(`send.${name}`), []);
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
    name: w.named.key.name,
    algorithm: 'hmac-sha256' as const,
    secret: Buffer.from(w.named.key.secret, 'base64'),
  };
  const query = packet.encode({
    type: 'query',
    id: 4242,
    flags: 0,
    questions: [{ name: 'ns.alpha-autoconf.test', type: 'A', class: 'IN' }],
  });
  const { wire, mac } = signMessage(query, key);
  const sent = await exchangeTcp('127.0.0.1', w.named.port, wire, 2000);
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
