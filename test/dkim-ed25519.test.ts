// An operator gives a domain an Ed25519 DKIM key (RFC 8463) beside its RSA key with the CLI: the record is one of
// the domain's records, the key signs as a second DKIM-Signature once that record verifies (never before, and not
// while it is missing), a pending one holds nothing up, and removing it stops the signature and drops the record.
import test, { type ExecutionContext } from 'ava';
import { createPublicKey, randomUUID } from 'node:crypto';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { runCli } from './helpers/cli.ts';
import type { TestTeam } from './helpers/platform.ts';
import { publishRecords, type ApiRecord } from './helpers/domain-records.ts';
import { commands } from '../shared/cli/commands.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import type { DeliveryDeps } from '../mta/delivery/deps.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { open, secretsKey } from '../shared/secrets.ts';

let w: MtaWorld;
let deps: DeliveryDeps;
test.before(async () => {
  w = await startMtaWorld();
  // Keys read for every message, so a key activated or retired signs (or stops) at the next delivery.
  deps = w.moreDeps({ domainCacheMs: 0 });
  w.mx('ed-inbox.test');
});
test.after.always(async () => {
  await w?.close();
});

const addKey = (domain: string, team?: string) =>
  commands['domain add-ed25519-key'](w.p.db, { domain, ...(team ? { team } : {}) }, w.p.config) as Promise<{
    domain: { id: string; status: string };
    key: { selector: string; algorithm: string; status: string };
    record: ApiRecord & { fqdn: string };
  }>;
const removeKey = (domain: string) =>
  commands['domain remove-ed25519-key'](w.p.db, { domain }, w.p.config) as Promise<{ removed: string[] }>;
const check = (id: string) => checkDomain(w.p.db, w.p.deps.dns, w.p.config, id);
const keysOf = (id: string) =>
  w.p.db('dkim_keys').where({ domain_id: id }).orderBy('created_at').select('selector', 'algorithm', 'status');

const publish = (domain: string, records: ApiRecord[]) => publishRecords(w.dns, domain, records);

async function getDomain(team: TestTeam, id: string) {
  const res = await w.p.request('GET', `/domains/${id}`, { key: team.key });
  if (res.status !== 200) throw new Error(`GET /domains/${id} answered ${res.status} ${res.text}`);
  return res.body as { status: string; records: ApiRecord[] };
}

/** A team out of the sandbox with `name` added through the API, every record published and verified. */
async function verifiedDomain(t: ExecutionContext, name: string) {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const created = await w.p.request('POST', '/domains', { key: team.key, body: { name } });
  t.is(created.status, 201, created.text);
  publish(name, created.body.records);
  t.is((await check(created.body.id))?.status, 'verified');
  const rsa = created.body.records
    .find((r: ApiRecord) => r.record === 'DKIM')
    .name.replace(/\._domainkey$/, '') as string;
  return { team, id: created.body.id as string, name, rsa };
}

/** Sends one email through the API and delivers it; the message as received, its DKIM-Signatures' s= and a=. */
async function sendAndDeliver(team: TestTeam, domain: string) {
  const to = `r-${randomUUID()}@ed-inbox.test`;
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from: `Shop <shop@${domain}>`, to, subject: 'Hello', text: 'Grüße' },
  });
  if (res.status !== 200) throw new Error(`POST /emails answered ${res.status} ${res.text}`);
  await processDelivery(deps, res.body.id);
  const [message] = w.sink.deliveredTo(to);
  const head = message.raw.toString('latin1').slice(0, message.raw.indexOf('\r\n\r\n'));
  const signatures = head
    .split(/\r\n(?![ \t])/)
    .filter((f) => /^dkim-signature:/i.test(f))
    .map((f) => {
      const tags = new Map(
        f
          .slice(f.indexOf(':') + 1)
          .replace(/\s+/g, '')
          .split(';')
          .map((tag) => [tag.slice(0, tag.indexOf('=')), tag.slice(tag.indexOf('=') + 1)]),
      );
      return `${tags.get('s')} ${tags.get('a')}`;
    });
  return { raw: message.raw, signatures: signatures.sort() };
}

test('the added key is its own DKIM record, signs as a second signature once it verifies, and stops when removed', async (t) => {
  const d = await verifiedDomain(t, 'ed-dual.test');
  const added = await addKey(d.name);
  const sel = added.key.selector;
  t.regex(sel, /^s\d{6}-[a-z0-9]{4}$/);
  t.not(sel, d.rsa);
  t.like(added, { domain: { id: d.id, status: 'verified' }, key: { algorithm: 'ed25519', status: 'pending' } });
  t.like(added.record, {
    record: 'DKIM',
    name: `${sel}._domainkey`,
    type: 'TXT',
    status: 'not_started',
    fqdn: `${sel}._domainkey.ed-dual.test`,
  });
  // RFC 8463 §4.2: p= is the raw 32-byte key, the public half of the sealed private key.
  const p = /^v=DKIM1; k=ed25519; p=([A-Za-z0-9+/]{43}=)$/.exec(added.record.value)?.[1] ?? '';
  t.truthy(p, added.record.value);
  const row = await w.p.db('dkim_keys').where({ domain_id: d.id, selector: sel }).first();
  const spki = createPublicKey(open(secretsKey(w.p.config), row.private_key_sealed)).export({
    format: 'der',
    type: 'spki',
  });
  t.is(spki.subarray(-32).toString('base64'), p);
  t.is(Buffer.from(p, 'base64').length, 32);

  const shown = await getDomain(d.team, d.id);
  t.deepEqual(
    shown.records.filter((r) => r.record === 'DKIM').map((r) => [r.name, r.value.slice(0, 18)]),
    [
      [`${d.rsa}._domainkey`, 'v=DKIM1; k=rsa; p='],
      [`${sel}._domainkey`, 'v=DKIM1; k=ed25519'],
    ],
  );
  t.true(
    await w.p
      .db('events')
      .where({ team_id: d.team.id, type: 'domain.updated' })
      .whereRaw(`data::text like ?`, [`%${sel}%`])
      .first()
      .then(Boolean),
  );

  // Not published yet: the domain stays verified and sends, signed by its RSA key alone.
  const waiting = await check(d.id);
  t.is(waiting?.status, 'verified');
  t.is((await getDomain(d.team, d.id)).records.find((r) => r.name === `${sel}._domainkey`)?.status, 'pending');
  t.deepEqual((await sendAndDeliver(d.team, d.name)).signatures, [`${d.rsa} rsa-sha256`]);

  // Published and verified: two signatures, each passing on its own key from the DNS.
  publish(d.name, [added.record]);
  t.is((await check(d.id))?.status, 'verified');
  t.deepEqual(
    (await keysOf(d.id)).map((k) => [k.algorithm, k.status]),
    [
      ['rsa', 'active'],
      ['ed25519', 'active'],
    ],
  );
  t.is((await getDomain(d.team, d.id)).records.find((r) => r.name === `${sel}._domainkey`)?.status, 'verified');
  const dual = await sendAndDeliver(d.team, d.name);
  t.deepEqual(dual.signatures, [`${d.rsa} rsa-sha256`, `${sel} ed25519-sha256`].sort());
  t.deepEqual(
    (await w.verifyDkim(dual.raw)).map((v) => `${v.selector} ${v.status}`).sort(),
    [`${d.rsa} pass`, `${sel} pass`].sort(),
  );

  // Removed: the record leaves the domain, the key is retired, the next message has the RSA signature only
  // (the Ed25519 record is still in the DNS, so only the removal can explain it).
  t.deepEqual((await removeKey(d.id)).removed, [sel]);
  t.false((await getDomain(d.team, d.id)).records.some((r) => r.name === `${sel}._domainkey`));
  t.deepEqual(
    (await keysOf(d.id)).map((k) => [k.algorithm, k.status]),
    [
      ['rsa', 'active'],
      ['ed25519', 'retired'],
    ],
  );
  t.deepEqual((await sendAndDeliver(d.team, d.name)).signatures, [`${d.rsa} rsa-sha256`]);
  t.is((await check(d.id))?.status, 'verified');
  await t.throwsAsync(removeKey(d.id), { message: /has no Ed25519 key/ });
});

test('an Ed25519 record that goes missing stops its signature, never the domain, and it signs again once back', async (t) => {
  const d = await verifiedDomain(t, 'ed-lapse.test');
  const { record, key } = await addKey(d.id);
  publish(d.name, [record]);
  await check(d.id);
  t.is((await sendAndDeliver(d.team, d.name)).signatures.length, 2);

  w.dns.remove(record.fqdn, 'TXT');
  t.is((await check(d.id))?.status, 'verified', 'the optional signature never takes verification away');
  t.deepEqual(
    (await keysOf(d.id)).map((k) => k.status),
    ['active', 'pending'],
  );
  t.is((await getDomain(d.team, d.id)).records.find((r) => r.name === record.name)?.status, 'failed');
  t.deepEqual((await sendAndDeliver(d.team, d.name)).signatures, [`${d.rsa} rsa-sha256`]);

  publish(d.name, [record]);
  await check(d.id);
  t.deepEqual(
    (await sendAndDeliver(d.team, d.name)).signatures,
    [`${d.rsa} rsa-sha256`, `${key.selector} ed25519-sha256`].sort(),
  );
});

test('a key added to a domain verified long ago has 72 hours of its own: pending, looked for every few minutes', async (t) => {
  const d = await verifiedDomain(t, 'ed-old.test');
  await w.p
    .db('domains')
    .where({ id: d.id })
    .update({ checking_since: new Date(Date.now() - 30 * 24 * 3600_000) });
  const { record } = await addKey(d.name);
  const now = Date.now();
  const checked = await check(d.id);
  t.is(checked?.status, 'verified');
  t.is((await getDomain(d.team, d.id)).records.find((r) => r.name === record.name)?.status, 'pending');
  t.true(checked!.next_check_at!.getTime() <= now + 10 * 60_000, "not the verified domain's daily re-check");
});

test('a settings update and an RSA rotation keep the Ed25519 record; each rotation replaces only its own algorithm', async (t) => {
  const d = await verifiedDomain(t, 'ed-rotate.test');
  const { record, key } = await addKey(d.name);
  const patched = await w.p.request('PATCH', `/domains/${d.id}`, {
    key: d.team.key,
    body: { custom_return_path: 'mail' },
  });
  t.is(patched.status, 200, patched.text);
  const afterPatch = await getDomain(d.team, d.id);
  t.truthy(afterPatch.records.find((r) => r.name === record.name && r.value === record.value));
  publish(
    d.name,
    afterPatch.records.filter((r) => r.name !== record.name),
  );
  t.is((await check(d.id))?.status, 'verified');
  t.deepEqual(
    (await keysOf(d.id)).map((k) => k.status),
    ['active', 'pending'],
  );

  // A pending Ed25519 key does not hold up an RSA rotation, and neither new key retires the other's algorithm.
  const rotated = await w.p.request('POST', `/domains/${d.id}/dkim/rotate`, { key: d.team.key });
  t.is(rotated.status, 200, rotated.text);
  t.truthy(rotated.body.records.find((r: ApiRecord) => r.name === record.name));
  publish(d.name, rotated.body.records);
  t.is((await check(d.id))?.status, 'verified');
  t.deepEqual(
    (await keysOf(d.id)).map((k) => [k.selector, k.algorithm, k.status]),
    [
      [d.rsa, 'rsa', 'retiring'],
      [key.selector, 'ed25519', 'active'],
      [rotated.body.selector, 'rsa', 'active'],
    ],
  );
  t.deepEqual(
    (await sendAndDeliver(d.team, d.name)).signatures,
    [`${rotated.body.selector} rsa-sha256`, `${key.selector} ed25519-sha256`].sort(),
  );
  t.truthy((await getDomain(d.team, d.id)).records.find((r) => r.name === record.name));
});

test('the command refuses a second key, the managed domain, an unknown domain, and a name two teams added without --team', async (t) => {
  const d = await verifiedDomain(t, 'ed-refuse.test');
  await addKey(d.name);
  await t.throwsAsync(addKey(d.id), { message: /already has an Ed25519 key/ });
  const managed = await w.p.db('domains').where({ team_id: d.team.id, managed: true }).first();
  await t.throwsAsync(addKey(managed.name), { message: /managed domain/ });
  await t.throwsAsync(addKey('ed-nobody.test'), { message: /not found/i });
  await t.throwsAsync(addKey(randomUUID()), { message: /not found/i });

  const other = await w.p.createTeam();
  t.is((await w.p.request('POST', '/domains', { key: other.key, body: { name: 'ed-twice.test' } })).status, 201);
  const mine = await w.p.request('POST', '/domains', { key: d.team.key, body: { name: 'ed-twice.test' } });
  await t.throwsAsync(addKey('ed-twice.test'), { message: /2 teams have added ed-twice\.test/ });
  t.is((await addKey('ed-twice.test', d.team.id)).domain.id, mine.body.id);
});

test('npm run cli -- domain add-ed25519-key / remove-ed25519-key, as an operator runs them', async (t) => {
  const d = await verifiedDomain(t, 'ed-cli.test');
  const env = { DATABASE_URL: w.p.config.DATABASE_URL, SECRETS_KEY: w.p.config.SECRETS_KEY! };
  const added = await runCli(env, 'domain', 'add-ed25519-key', '--domain', 'ED-CLI.test');
  t.is(added.code, 0, added.stderr);
  const out = JSON.parse(added.stdout);
  t.like(out, {
    domain: { id: d.id, name: d.name },
    key: { algorithm: 'ed25519', status: 'pending' },
    record: { record: 'DKIM', type: 'TXT' },
  });
  // The CLI's records are the api's: the SPF and RSA records it recomputed are untouched.
  const records = (await getDomain(d.team, d.id)).records;
  t.deepEqual(
    records.map((r) => r.status),
    ['verified', 'verified', 'verified', 'not_started'],
  );
  const removed = await runCli(env, 'domain', 'remove-ed25519-key', '--domain', d.id);
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(JSON.parse(removed.stdout).removed, [out.key.selector]);
  const again = await runCli(env, 'domain', 'remove-ed25519-key', '--domain', d.id);
  t.is(again.code, 2);
  t.regex(JSON.parse(again.stderr).error, /has no Ed25519 key/);
});
