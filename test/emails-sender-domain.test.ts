// Which records decide whether a domain may send (shared/emails/rules.ts): SPF MX and TXT at the return-path
// label and the DKIM record of the active key, with sending enabled. Tracking, receiving and a rotation's new
// key do not. REST and SMTP submission take the same accept path.
import test from 'ava';
import nodemailer from 'nodemailer';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { CHECK_WINDOW_MS, VERIFIED_RECHECK_MS } from '../shared/domains/status.ts';

let p: Platform;
let dns: DnsServer;
let submission: Submission;
let submissionPort: number;

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-one.test');
  submission = await startSubmission(p.deps, { implicitTls: true });
  submissionPort = submission.port;
});
test.after.always(async () => {
  await submission?.close();
  await p?.close();
  await dns?.close();
});

interface Rec {
  record: string;
  name: string;
  type: string;
  status: string;
  value: string;
}

const send = (team: SendingTeam, extra: Record<string, unknown> = {}) =>
  p.request('POST', '/emails', {
    key: team.key,
    body: { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x', ...extra },
  });

async function domainOf(team: SendingTeam): Promise<{ status: string; records: Rec[] }> {
  const res = await p.request('GET', `/domains/${team.domainId}`, { key: team.key });
  return res.body;
}

async function patch(team: SendingTeam, body: Record<string, unknown>) {
  const res = await p.request('PATCH', `/domains/${team.domainId}`, { key: team.key, body });
  if (res.status !== 200) throw new Error(`PATCH /domains: ${res.status} ${res.text}`);
}

const recheck = (team: SendingTeam) => checkDomain(p.db, p.deps.dns, p.config, team.domainId);

function publish(domain: string, r: Rec) {
  const name = r.name === '@' ? domain : `${r.name}.${domain}`;
  if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: 10 }]);
  else dns.set(name, 'TXT', [r.value]);
}

function isNotVerified(t: import('ava').ExecutionContext, res: Awaited<ReturnType<typeof send>>, domain: string) {
  t.is(res.status, 403, res.text);
  t.is(res.body.name, 'validation_error');
  t.is(
    res.body.message,
    `The ${domain} domain is not verified. Add and verify it on the domains page (POST /domains).`,
  );
}

test('click tracking whose CNAME is not published yet leaves the domain partially verified, and it still sends', async (t) => {
  const team = await sendingTeam(p, dns);
  t.is((await send(team)).status, 200);
  await patch(team, { click_tracking: true });
  let domain = await domainOf(team);
  t.is(domain.status, 'partially_verified');
  t.deepEqual(
    domain.records
      .filter((r) => r.status !== 'verified')
      .map((r) => r.record)
      .sort(),
    ['Tracking', 'TrackingCAA'],
  );
  const res = await send(team);
  t.is(res.status, 200, res.text);

  // The verifier looks and finds no CNAME: still not verified overall, still sending.
  const checked = await recheck(team);
  t.not(checked?.status, 'verified');
  domain = await domainOf(team);
  t.not(domain.records.find((r) => r.record === 'Tracking')?.status, 'verified');
  t.is((await send(team)).status, 200);
});

test('a domain with receiving enabled but no Receiving MX yet still sends', async (t) => {
  const team = await sendingTeam(p, dns);
  await patch(team, { capabilities: { receiving: 'enabled' } });
  await recheck(team);
  const domain = await domainOf(team);
  t.not(domain.status, 'verified');
  t.not(domain.records.find((r) => r.record === 'Receiving')?.status, 'verified');
  const res = await send(team);
  t.is(res.status, 200, res.text);
});

test('the sending records decide: an unpublished DKIM or SPF record keeps the domain from sending', async (t) => {
  const team = await p.createTeam();
  const name = `records-${process.pid}.test`;
  const created = await p.request('POST', '/domains', { key: team.key, body: { name, click_tracking: true } });
  t.is(created.status, 201, created.text);
  const owner = { ...team, domain: name, domainId: created.body.id as string };
  await p.db('teams').where({ id: team.id }).update({ sandbox_regions: '{}' });
  const records = created.body.records as Rec[];
  const spf = records.filter((r) => r.record === 'SPF');
  const dkim = records.find((r) => r.record === 'DKIM')!;
  t.is(spf.length, 2);

  // Nothing published: not verified.
  isNotVerified(t, await send(owner), name);
  // SPF (both records) only: the DKIM record of the signing key is missing.
  for (const r of spf) publish(name, r);
  await recheck(owner);
  isNotVerified(t, await send(owner), name);
  // The SPF MX missing while TXT and DKIM are published.
  publish(name, dkim);
  dns.remove(`${spf.find((r) => r.type === 'MX')!.name}.${name}`, 'MX');
  await recheck(owner);
  isNotVerified(t, await send(owner), name);
  // Every sending record published; the tracking CNAME still is not.
  for (const r of spf) publish(name, r);
  await recheck(owner);
  const domain = await domainOf(owner);
  t.is(domain.status, 'partially_verified');
  t.true(domain.records.filter((r) => r.record === 'SPF' || r.record === 'DKIM').every((r) => r.status === 'verified'));
  t.is((await send(owner)).status, 200);

  // The customer removes the DKIM record: the next check notices and sending stops.
  dns.remove(`${dkim.name}.${name}`, 'TXT');
  await recheck(owner);
  isNotVerified(t, await send(owner), name);
});

test("a rotation's new DKIM key does not decide until it signs", async (t) => {
  const team = await sendingTeam(p, dns);
  await patch(team, { click_tracking: true });
  const rotated = await p.request('POST', `/domains/${team.domainId}/dkim/rotate`, { key: team.key });
  t.true(rotated.status < 300, rotated.text);
  await recheck(team);
  const dkim = (await domainOf(team)).records.filter((r) => r.record === 'DKIM');
  t.is(dkim.length, 2);
  t.is(dkim.filter((r) => r.status === 'verified').length, 1, "the new key's record is not published");
  t.is((await send(team)).status, 200);
});

test('sending disabled answers so before any record is looked at, verified or not', async (t) => {
  const team = await sendingTeam(p, dns);
  await patch(team, { capabilities: { sending: 'disabled', receiving: 'enabled' } });
  const disabled = await send(team);
  t.is(disabled.status, 403, disabled.text);
  t.is(disabled.body.name, 'validation_error');
  t.is(disabled.body.message, `Sending is disabled for the ${team.domain} domain.`);

  // A domain never verified, sending disabled: the capability is what it hears about.
  const fresh = await p.createTeam();
  const name = `receive-only-${process.pid}.test`;
  const created = await p.request('POST', '/domains', {
    key: fresh.key,
    body: { name, capabilities: { sending: 'disabled', receiving: 'enabled' } },
  });
  t.is(created.status, 201, created.text);
  const res = await p.request('POST', '/emails', {
    key: fresh.key,
    body: { from: `a@${name}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' },
  });
  t.is(res.status, 403);
  t.is(res.body.message, `Sending is disabled for the ${name} domain.`);

  // Enabled again: its sending records are new and unchecked until the verifier sees them (they are still in DNS).
  await patch(team, { capabilities: { sending: 'enabled' } });
  isNotVerified(t, await send(team), team.domain);
  await recheck(team);
  t.is((await send(team)).status, 200);
});

test('the managed domain sends, verified by the platform with no records of its own', async (t) => {
  const team = await p.createTeam();
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data[0];
  t.is(managed.status, 'verified');
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `me@${managed.name}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'x', text: 'x' },
  });
  t.is(res.status, 200, res.text);
});

test('SMTP submission takes the same rule: a partially verified domain with verified sending records is accepted, a disabled one refused', async (t) => {
  const team = await sendingTeam(p, dns);
  await patch(team, { click_tracking: true });
  t.is((await domainOf(team)).status, 'partially_verified');
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: submissionPort,
    secure: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass: team.key },
  });
  const mail = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'over smtp', text: 'hello' };
  const info = await transport.sendMail(mail);
  t.regex(info.response, /queued as [0-9a-f-]{36}/);

  await patch(team, { capabilities: { sending: 'disabled', receiving: 'enabled' } });
  const err = await t.throwsAsync(transport.sendMail(mail));
  t.regex(String((err as { response?: string }).response), /^550 5\.7\.1 Sending is disabled for the /);
  transport.close();
});

test('a domain sending on its SPF and DKIM alone is re-checked daily once its window closes, and stops sending when its DKIM record goes', async (t) => {
  const team = await sendingTeam(p, dns);
  await patch(team, { click_tracking: true });
  // The Tracking CNAME is never published: past the 72-hour window it has failed, and the domain still sends.
  const after = new Date(Date.now() + CHECK_WINDOW_MS + 60_000);
  let checked = (await checkDomain(p.db, p.deps.dns, p.config, team.domainId, after))!;
  t.is(checked.status, 'partially_failed');
  t.deepEqual(
    checked.next_check_at,
    new Date(after.getTime() + VERIFIED_RECHECK_MS),
    'watched daily, as a verified domain is',
  );
  t.is((await send(team)).status, 200);

  // The customer removes the DKIM record; the next daily check notices, and sending stops.
  const dkim = (await domainOf(team)).records.find((r) => r.record === 'DKIM')!;
  dns.remove(`${dkim.name}.${team.domain}`, 'TXT');
  const nextDay = checked.next_check_at!;
  checked = (await checkDomain(p.db, p.deps.dns, p.config, team.domainId, nextDay))!;
  t.is((await domainOf(team)).records.find((r) => r.record === 'DKIM')?.status, 'failed');
  isNotVerified(t, await send(team), team.domain);
  t.deepEqual(
    checked.next_check_at,
    null,
    'a domain that can no longer send waits for the customer (POST /domains/{id}/verify)',
  );
});
