// mailauth parses the PEM private key for every signature it makes (its getPrivateKey calls
// crypto.createPrivateKey each time): ~0.6 ms of CPU, and a fresh RSA key object signs ~1 ms slower than one that
// has signed before (OpenSSL keeps its precomputed values on the key). A KeyObject is immutable, so the signer
// keeps each key it has parsed: mailauth reaches createPrivateKey through the crypto module object at each call,
// and finds this one. Only the shape mailauth uses ({key: Buffer, format: 'pem'}, no passphrase) is kept; every
// other call goes to Node's own. Imported for its effect by sign.ts (the signing threads and the inline signer).
import crypto, { type KeyObject } from 'node:crypto';

const parse = crypto.createPrivateKey;
const parsed = new Map<string, KeyObject>();

crypto.createPrivateKey = ((key: Parameters<typeof parse>[0]) => {
  if (typeof key !== 'object' || !('key' in key) || !Buffer.isBuffer(key.key) || key.format !== 'pem' || 'passphrase' in key) return parse(key);
  const pem = key.key.toString('latin1');
  let found = parsed.get(pem);
  if (!found) {
    found = parse(key);
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(pem, found);
  }
  return found;
}) as typeof parse;
