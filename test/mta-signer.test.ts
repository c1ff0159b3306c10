// The two ways the mta signs (mta/delivery/sign.ts): on its main thread (the default on a machine of two cores or
// fewer) and in signing threads. Both sign with mailauth and keep the parsed keys (sign.ts parsedKey), so for the same
// message, keys and time they must give the very same DKIM-Signature fields (RSA PKCS#1 v1.5 and Ed25519 are
// deterministic), and mailauth's verifier must pass them.
import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { createSigner, defaultSigningThreads, type SigningKey } from '../mta/delivery/sign.ts';

const pem = (type: 'rsa' | 'ed25519') =>
  type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');

const rsa = pem('rsa');
const ed = pem('ed25519');
const keys: SigningKey[] = [
  {
    domain: 'signer.example',
    selector: 'r1',
    privateKey: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  },
  {
    domain: 'signer.example',
    selector: 'e1',
    privateKey: ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  },
];
const records: Record<string, string> = {
  'r1._domainkey.signer.example': `v=DKIM1; k=rsa; p=${rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
  'e1._domainkey.signer.example': `v=DKIM1; k=ed25519; p=${ed.publicKey.export({ type: 'spki', format: 'der' }).subarray(12).toString('base64')}`,
};
const message = Buffer.from(
  'From: a@signer.example\r\nTo: b@example.net\r\nSubject: Same bytes\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\n' +
    'Message-ID: <1@signer.example>\r\n\r\nHello,\r\nthe same body either way.\r\n',
);
const now = new Date('2026-11-23T10:00:00Z');

test('inline and threaded signing give the same signatures, and mailauth verifies them', async (t) => {
  const inline = createSigner({ threads: 0 });
  const threaded = createSigner({ threads: 1 });
  try {
    const [a, b] = await Promise.all([inline.sign(message, keys, now), threaded.sign(message, keys, now)]);
    t.is(a, b);
    // Twice on each path: the second signature comes from the kept key object and must not differ.
    t.is(await inline.sign(message, keys, now), a);
    t.is(await threaded.sign(message, keys, now), a);
    const signed = Buffer.concat([Buffer.from(a), message]);
    const resolver = async (name: string, type: string) => {
      if (type !== 'TXT' || !records[name]) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return [[records[name]]];
    };
    const verdict = await dkimVerify(signed, { resolver });
    t.deepEqual(
      verdict.results.map((r: { status: { result: string } }) => r.status.result),
      ['pass', 'pass'],
    );
  } finally {
    await Promise.all([inline.close(), threaded.close()]);
  }
});

test('no signing threads by default on two cores or fewer; cores minus two beyond', (t) => {
  t.deepEqual(
    [1, 2, 3, 4, 8].map((cores) => defaultSigningThreads(cores)),
    [0, 0, 1, 2, 6],
  );
});
