// DKIM as other implementations see it: an RSA signature and, for a domain with an active Ed25519 key, a second
// Ed25519 signature (RFC 8463 dual signing), each verified by mailauth, by dkimpy (python3-dkim) and by
// opendkim-testmsg (libopendkim, keys over real DNS), implementations that share no code with the signer.
import test from 'ava';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { insertEmail } from './helpers/emails.ts';
import { opendkimVerify } from './helpers/opendkim.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { newId } from '../shared/ids.ts';
import { seal, secretsKey } from '../shared/secrets.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const DKIMPY = `
import sys, json, dkim
records = json.loads(sys.argv[1])
def dnsfunc(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return records.get(name.rstrip('.').lower(), '').encode()
def verify(message, i):
    try:
        return dkim.DKIM(message).verify(idx=i, dnsfunc=dnsfunc)
    except dkim.DKIMException as e:
        print(e, file=sys.stderr)
        return False
message = sys.stdin.buffer.read()
print(json.dumps([verify(message, i) for i in range(int(sys.argv[2]))]))
`;

/** dkimpy's verdict on each DKIM-Signature of `raw`, with the TXT records given (name → value). */
function dkimpy(raw: Buffer, records: Record<string, string>, signatures: number): Promise<boolean[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      '/usr/bin/python3',
      ['-c', DKIMPY, JSON.stringify(records), String(signatures)],
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`dkimpy failed (apt-get install python3-dkim): ${stderr || err.message}`));
        resolve(JSON.parse(stdout));
      },
    );
    child.stdin?.end(raw);
  });
}

test('RSA and Ed25519 signatures, each verified by mailauth, dkimpy and opendkim-testmsg', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'dual-signed.test');
  const ed = generateKeyPairSync('ed25519');
  const edPublic = (ed.publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('base64');
  await w.p.db('dkim_keys').insert({
    id: newId(),
    team_id: team.id,
    domain_id: domain.id,
    selector: 'ed1',
    algorithm: 'ed25519',
    public_key: edPublic,
    private_key_sealed: seal(secretsKey(w.p.config), ed.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string),
    status: 'active',
    activated_at: new Date(),
  });
  const edRecord = `v=DKIM1; k=ed25519; p=${edPublic}`;
  w.dns.set('ed1._domainkey.dual-signed.test', 'TXT', [edRecord]);
  w.mx('dual-rcpt.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: ['d@dual-rcpt.test'],
    html: '<p>Grüße, naïve café</p>',
  });
  await processDelivery(w.deps, id);
  const [message] = w.sink.deliveredTo('d@dual-rcpt.test');

  const verdicts = await w.verifyDkim(message.raw);
  t.deepEqual(verdicts.map((v) => [v.status, v.selector]).sort(), [
    ['pass', 'ed1'],
    ['pass', domain.selector],
  ]);
  t.regex(message.raw.toString(), /a=ed25519-sha256/);
  t.regex(message.raw.toString(), /a=rsa-sha256/);

  const rsa = await w.p.db('dkim_keys').where({ domain_id: domain.id, algorithm: 'rsa' }).first();
  const records = {
    [`${domain.selector}._domainkey.dual-signed.test`]: `v=DKIM1; k=rsa; p=${rsa.public_key}`,
    'ed1._domainkey.dual-signed.test': edRecord,
  };
  t.deepEqual(await dkimpy(message.raw, records, 2), [true, true]);
  // Each signature alone, so one good signature cannot cover for the other.
  t.deepEqual(
    (await opendkimVerify(message.raw, records)).map((v) => v.output),
    ['', ''],
  );
  // The same checks fail on a tampered body, and without the keys in DNS: the verifiers are really checking.
  // (In the body: a 'Gr' inside a signature's base64 would break that signature alone.)
  const text = message.raw.toString();
  const bodyAt = text.indexOf('\r\n\r\n');
  const tampered = Buffer.from(text.slice(0, bodyAt) + text.slice(bodyAt).replace('Gr', 'Xr'));
  t.deepEqual(await dkimpy(tampered, records, 2), [false, false]);
  t.deepEqual(
    (await opendkimVerify(tampered, records)).map((v) => [v.pass, v.output]),
    [
      [false, 'opendkim-testmsg: dkim_eom(): Bad signature'],
      [false, 'opendkim-testmsg: dkim_eom(): Bad signature'],
    ],
  );
  t.deepEqual(
    (await opendkimVerify(message.raw, {})).map((v) => v.output),
    ['opendkim-testmsg: dkim_eom(): Key retrieval failed', 'opendkim-testmsg: dkim_eom(): Key retrieval failed'],
  );
});
