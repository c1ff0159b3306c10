// The managed domain's mail signed with the platform key: `d=` MANAGED_DOMAIN_HOST (the managed domains' parent,
// so DMARC's relaxed alignment holds), `s=` MANAGED_DKIM_SELECTOR. Sent through the api to a verified identity,
// delivered by the MTA's job to the loopback sink, checked against the record the operator CLI (a real
// subprocess) prints, published on the loopback DNS: mailauth and opendkim-testmsg verify the signature and the
// inbound's own authenticator finds it aligned with a DMARC pass. The key is created once and stored sealed.
import test from 'ava';
import { createPublicKey, randomBytes } from 'node:crypto';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { runCli } from './helpers/cli.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { createAuthenticator } from '../inbound/receive/authenticate.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { ensurePlatformKey } from '../shared/domains/platform-dkim.ts';
import { open, secretsKey } from '../shared/secrets.ts';
import { verifyIdentity } from '../shared/teams/identities.ts';

// Not the default host: the signature must follow the configuration.
const HOST = 'managed-mail.test';
const SELECTOR = 'pwtest7';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld({ env: { MANAGED_DOMAIN_HOST: HOST, MANAGED_DKIM_SELECTOR: SELECTOR } });
});
test.after.always(async () => {
  await w?.close();
});

/** `npm run cli -- <args>` as the operator runs it, on the world's database and secrets key; its JSON answer. */
async function cli(...args: string[]): Promise<{ code: number | null; out: unknown; stderr: string }> {
  const run = await runCli(
    {
      DATABASE_URL: w.p.config.DATABASE_URL,
      SECRETS_KEY: w.p.config.SECRETS_KEY!,
      MANAGED_DOMAIN_HOST: HOST,
      MANAGED_DKIM_SELECTOR: SELECTOR,
    },
    ...args,
  );
  return { code: run.code, out: run.code === 0 ? JSON.parse(run.stdout) : run.stdout, stderr: run.stderr };
}

test('mail from the managed domain is signed d=<MANAGED_DOMAIN_HOST> with the key of the record the CLI prints', async (t) => {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  t.true(managed.name.endsWith(`.${HOST}`));
  // The managed domain reaches only the team's verified identities (shared/emails/rules.ts).
  w.mx('team-inbox.test');
  await verifyIdentity(w.p.db, team.id, 'owner@team-inbox.test');
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `Owner <owner@${managed.name}>`,
      to: 'owner@team-inbox.test',
      subject: 'Signed by the platform',
      html: '<p>Grüße</p>',
    },
  });
  t.is(sent.status, 200, sent.text);
  await processDelivery(w.deps, sent.body.id);
  const [message] = w.sink.deliveredTo('owner@team-inbox.test');
  t.truthy(message, 'delivered to the sink');
  const signature = /^DKIM-Signature:.*?(?=\r\n\S)/ms.exec(message.raw.toString())?.[0] ?? '';
  t.regex(signature, new RegExp(`\\bd=${HOST.replace(/\./g, '\\.')};`));
  t.regex(signature, new RegExp(`\\bs=${SELECTOR};`));
  t.regex(signature, /\ba=rsa-sha256;/);
  // Nothing published yet: the verifiers really look the key up.
  t.not((await w.verifyDkim(message.raw))[0]?.status, 'pass');

  const run = await cli('managed-dkim');
  t.is(run.code, 0, run.stderr);
  const { record } = run.out as { record: { name: string; type: string; value: string } };
  t.is(record.name, `${SELECTOR}._domainkey.${HOST}`);
  t.is(record.type, 'TXT');
  t.regex(record.value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
  w.dns.set(record.name, 'TXT', [record.value]);
  t.deepEqual(await w.verifyDkim(message.raw), [{ status: 'pass', domain: HOST, selector: SELECTOR }]);

  // As a receiver's DMARC check sees it (RFC 7489 §3.1.1 relaxed alignment: same organizational domain).
  w.dns.set(`_dmarc.${HOST}`, 'TXT', ['v=DMARC1; p=reject']);
  const authenticator = createAuthenticator({
    dns: createResolver({ servers: [w.dns.address], timeoutMs: 2000, tries: 1 }),
    authservId: 'mx.team-inbox.test',
  });
  const { verdicts } = await authenticator.authenticate(message.raw, {
    ip: '127.0.0.1',
    helo: w.p.config.MTA_HOSTNAME,
    sender: message.from,
  });
  t.deepEqual(verdicts.dkim, [{ result: 'pass', domain: HOST, selector: SELECTOR, aligned: true }]);
  // The policy found at the organizational domain (RFC 7489 §6.6.3), the From domain having none of its own.
  t.like(verdicts.dmarc, { result: 'pass', domain: HOST });

  // The CLI printed the key the mta signed with: still one row.
  t.is((await w.p.db('platform_dkim_keys').where({ domain: HOST })).length, 1);
});

test('the platform key is created once however many ensure it at once, and stored sealed', async (t) => {
  // Its own (host, selector), so the other test's key does not interfere.
  const config = { MANAGED_DOMAIN_HOST: 'race-managed.test', MANAGED_DKIM_SELECTOR: 'race1' };
  const secrets = secretsKey(w.p.config);
  let inserts = 0;
  const count = (q: { sql: string; bindings?: unknown[] }) => {
    if (q.sql.startsWith('insert into "platform_dkim_keys"') && q.bindings?.includes(config.MANAGED_DOMAIN_HOST))
      inserts++;
  };
  w.p.db.on('query', count);
  const [a, b] = await Promise.all([
    ensurePlatformKey(w.p.db, secrets, config),
    ensurePlatformKey(w.p.db, secrets, config),
  ]);
  w.p.db.off('query', count);
  // Both found no key and generated one (a key takes far longer than a read): the conflict really happened.
  t.is(inserts, 2);
  const again = await ensurePlatformKey(w.p.db, secrets, config);
  t.is(a.public_key, b.public_key);
  t.is(again.public_key, a.public_key);
  const rows = await w.p.db('platform_dkim_keys').where({ domain: config.MANAGED_DOMAIN_HOST });
  t.is(rows.length, 1);
  t.like(rows[0], { selector: 'race1', algorithm: 'rsa', public_key: a.public_key });

  // Sealed (AES-256-GCM, shared/secrets.ts): no column holds the key in clear, and only the secrets key opens it.
  const row = rows[0];
  t.regex(row.private_key_sealed, /^v1\./);
  t.false(Object.values(row).some((v) => String(v).includes('PRIVATE KEY')));
  const pem = open(secrets, row.private_key_sealed);
  t.regex(pem, /^-----BEGIN PRIVATE KEY-----/);
  const publicKey = createPublicKey(pem);
  t.is(publicKey.asymmetricKeyDetails?.modulusLength, 2048);
  t.is((publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64'), row.public_key);
  t.throws(() => open(randomBytes(32), row.private_key_sealed));
});
