// DKIM-Signature (RFC 6376) with relaxed/relaxed canonicalization, rsa-sha256 and ed25519-sha256 (RFC 8463):
// canonicalize the body once, hash it, then per key canonicalize the signed header fields and the signature
// field itself (b= empty) and sign. Each parsed private key is kept (a KeyObject is immutable): parsing the PEM
// costs more than an RSA-2048 signature. Line ends are read as CRLF or LF: the SMTP client sends CRLF.
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';

export interface DkimKey {
  domain: string;
  selector: string;
  /** PKCS#8 PEM; the algorithm follows from the key. */
  privateKey: string;
}

const keys = new Map<string, KeyObject>();
function keyOf(pem: string): KeyObject {
  let key = keys.get(pem);
  if (!key) {
    key = createPrivateKey(pem);
    if (keys.size >= 1000) keys.clear();
    keys.set(pem, key);
  }
  return key;
}

/** §3.4.4: WSP runs to one SP, none at line ends, no empty lines at the end, CRLF after the last line. */
export function relaxedBody(body: string): string {
  const lines = body.split(/\r?\n/).map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  let end = lines.length;
  while (end > 0 && lines[end - 1] === '') end--;
  return end === 0 ? '' : `${lines.slice(0, end).join('\r\n')}\r\n`;
}

/** §3.4.2: lower-case name, unfolded value, WSP runs to one SP, none around the colon or at the end. */
export function relaxedHeader(name: string, value: string): string {
  return `${name.trim().toLowerCase()}:${value.replace(/\r?\n(?=[ \t])/g, '').replace(/[ \t]+/g, ' ').trim()}`;
}

interface Field { name: string; value: string }

function splitMessage(message: string): { fields: Field[]; body: string } {
  const m = /\r?\n\r?\n/.exec(message);
  const head = m ? message.slice(0, m.index) : message;
  const body = m ? message.slice(m.index + m[0].length) : '';
  const fields: Field[] = [];
  for (const raw of head.split(/\r?\n(?![ \t])/)) {
    const colon = raw.indexOf(':');
    if (colon > 0) fields.push({ name: raw.slice(0, colon), value: raw.slice(colon + 1) });
  }
  return { fields, body };
}

/**
 * The DKIM-Signature fields (each ending in CRLF) to put in front of `message`, one per key, each covering the
 * fields named in `headerNames` that the message has (every instance, bottom-up, §5.4.2).
 */
export function dkimSignatures(message: Buffer, dkimKeys: DkimKey[], headerNames: string[], signTime: Date): string {
  if (dkimKeys.length === 0) return '';
  const { fields, body } = splitMessage(message.toString('latin1'));
  const bh = createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64');
  const wanted = new Set(headerNames.map((h) => h.toLowerCase()));
  const signed = fields.filter((f) => wanted.has(f.name.trim().toLowerCase())).reverse();
  const h = signed.map((f) => f.name.trim()).join(':');
  const canonical = signed.map((f) => `${relaxedHeader(f.name, f.value)}\r\n`).join('');
  const t = Math.floor(signTime.getTime() / 1000);
  return dkimKeys.map((k) => {
    const key = keyOf(k.privateKey);
    const algorithm = key.asymmetricKeyType === 'ed25519' ? 'ed25519-sha256' : 'rsa-sha256';
    const tags = [`v=1`, `a=${algorithm}`, `c=relaxed/relaxed`, `d=${k.domain}`, `q=dns/txt`, `s=${k.selector}`, `t=${t}`, `bh=${bh}`, `h=${h}`];
    const unsigned = `${tags.join('; ')}; b=`;
    const data = Buffer.from(canonical + relaxedHeader('DKIM-Signature', unsigned), 'latin1');
    // RFC 8463 §3: Ed25519 signs the SHA-256 digest of the data; RSA signs the data with SHA-256.
    const b = algorithm === 'rsa-sha256' ? sign('sha256', data, key) : sign(null, createHash('sha256').update(data).digest(), key);
    // Folded only where a space already was (";" + SP) and inside b= (FWS there is ignored, §3.5).
    const folded = `${tags.join(';\r\n ')};\r\n b=${b.toString('base64').replace(/.{1,72}/g, '$&\r\n ').trimEnd()}`;
    return `DKIM-Signature: ${folded}\r\n`;
  }).join('');
}
