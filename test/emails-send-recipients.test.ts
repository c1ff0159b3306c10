// Whom a send reaches: the sender domain it may use, the sandbox and the managed domain's reach, recipients that
// cannot receive mail, and the team's suppressions.
import test from 'ava';
import { mailDomain, sendingTeam, startSendingWorld } from './helpers/sending.ts';
import type { Platform } from './helpers/platform.ts';
import type { DnsServer } from './helpers/dns-server.ts';

let p: Platform;
let dns: DnsServer;
let close = async () => {};
test.before(async () => {
  ({ p, dns, close } = await startSendingWorld(['inbox-one.test', 'inbox-two.test']));
  dns.set('nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
});
test.after.always(() => close());

test("the sender domain must be the team's, verified, and the key's own when the key is bound", async (t) => {
  const team = await sendingTeam(p, dns);
  const other = await sendingTeam(p, dns);
  const body = (from: string) => ({ from, to: 'ann@inbox-one.test', subject: 'x', text: 'x' });
  for (const from of [`a@${other.domain}`, 'a@unknown-sender.test']) {
    const res = await p.request('POST', '/emails', { key: team.key, body: body(from) });
    t.is(res.status, 403, from);
    t.is(res.body.name, 'validation_error');
  }
  const second = await p.request('POST', '/domains', { key: team.key, body: { name: `second-${team.domain}` } });
  const bound = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'b', permission: 'sending_access', domain_id: second.body.id },
  });
  const refused = await p.request('POST', '/emails', { key: bound.body.token, body: body(`a@${team.domain}`) });
  t.is(refused.status, 403);
  t.regex(refused.body.message, /only send from its own domain/);
});

test("the sandbox reaches only verified identities, the team's domains and the simulator", async (t) => {
  const team = await sendingTeam(p, dns, { sandbox: true });
  mailDomain(dns, team.domain);
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `a@${team.domain}`, to: 'stranger@inbox-one.test', subject: 'x', text: 'x' },
  });
  t.is(res.status, 403);
  t.is(res.body.name, 'validation_error');
  t.deepEqual(res.body.details, {
    recipient: 'stranger@inbox-one.test',
    region: 'us-east-1',
    allowed: ['verified_identity', 'verified_domain', 'simulator'],
  });
  for (const to of [`delivered@${p.config.SIMULATOR_DOMAIN}`, `someone@${team.domain}`]) {
    const ok = await p.request('POST', '/emails', {
      key: team.key,
      body: { from: `a@${team.domain}`, to, subject: 'x', text: 'x' },
    });
    t.is(ok.status, 200, `${to}: ${ok.text}`);
  }
  await p.db('team_identities').insert({ team_id: team.id, email: 'stranger@inbox-one.test' });
  t.is(
    (
      await p.request('POST', '/emails', {
        key: team.key,
        body: { from: `a@${team.domain}`, to: 'stranger@inbox-one.test', subject: 'x', text: 'x' },
      })
    ).status,
    200,
  );
});

test('the managed domain sends only to verified identities and the simulator', async (t) => {
  const team = await p.createTeam();
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data[0].name;
  await p.db('teams').where({ id: team.id }).update({ sandbox_regions: '{}' });
  const refused = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `me@${managed}`, to: 'x@inbox-one.test', subject: 'x', text: 'x' },
  });
  t.is(refused.status, 403);
  t.deepEqual(refused.body.details.allowed, ['verified_identity', 'simulator']);
  const sim = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `me@${managed}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'x', text: 'x' },
  });
  t.is(sim.status, 200, sim.text);
});

test('recipients that cannot receive mail: 422 when all are unusable, dropped when some are', async (t) => {
  const team = await sendingTeam(p, dns);
  const send = (to: string[]) =>
    p.request('POST', '/emails', { key: team.key, body: { from: `a@${team.domain}`, to, subject: 'x', text: 'x' } });
  const cases: [string, string, Record<string, unknown>?][] = [
    ['a@example.com', 'reserved_domain'],
    ['a@foo.invalid', 'reserved_domain'],
    ['a@gmial.com', 'typo_domain', { suggestion: 'gmail.com' }],
    ['a@nullmx.test', 'no_mail'],
    ['a@no-such-domain-here.test', 'no_mail'],
  ];
  for (const [to, cause, extra] of cases) {
    const res = await send([to]);
    t.is(res.status, 422, to);
    t.like(res.body.details, { reason: 'invalid_recipient', cause, ...(extra ?? {}) }, to);
  }
  await p.db('suppressions').insert({
    id: '01a20175-0000-7000-8000-000000000001',
    team_id: (await p.createTeam()).id,
    email: 'gone@inbox-two.test',
    origin: 'bounce',
  });
  t.like((await send(['gone@inbox-two.test'])).body.details, { cause: 'dead_address' });

  const mixed = await send(['ok@inbox-one.test', 'a@example.com']);
  t.is(mixed.status, 200);
  const rows = await p.db('email_recipients').where({ email_id: mixed.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => [r.address, r.status, r.last_response]),
    [
      ['a@example.com', 'failed', 'reserved_domain'],
      ['ok@inbox-one.test', 'queued', null],
    ],
  );
});

test('suppressed recipients are not sent to and email.suppressed is recorded', async (t) => {
  const team = await sendingTeam(p, dns);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'blocked@inbox-one.test' } });
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `a@${team.domain}`, to: ['Blocked@inbox-one.test', 'fine@inbox-one.test'], subject: 'x', text: 'x' },
  });
  t.is(res.status, 200, res.text);
  const rows = await p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => r.status),
    ['suppressed', 'queued'],
  );
  const event = await p.db('events').where({ team_id: team.id, type: 'email.suppressed' }).first();
  // The entry's origin is the reason: added by hand here.
  t.like(event.data, {
    email_id: res.body.id,
    to: ['Blocked@inbox-one.test'],
    suppressed: { type: 'OnAccountSuppressionList', reason: 'manual' },
  });
});
