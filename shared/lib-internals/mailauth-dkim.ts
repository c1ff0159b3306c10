// DKIM signatures (RFC 6376, RFC 8463) made with mailauth's own canonicalization, body hash and header
// formatting, signed with a parsed key the caller keeps.
//
// Library: mailauth 4.13.3. Internals used: lib/tools.js (parseHeaders, getSigningHeaderLines,
// formatSignatureHeaderLine), lib/dkim/body (dkimBody), lib/dkim/header (generateCanonicalizedHeader): the parts
// mailauth's DkimSigner (lib/dkim/dkim-signer.js, finalize()) is made of. Why: DkimSigner parses the PEM key for
// every signature (tools.getPrivateKey → crypto.createPrivateKey), ~0.6 ms of CPU, and a fresh RSA key object
// signs ~1 ms slower than one that has signed before (OpenSSL keeps precomputed values on the key): about half
// the cost of a signature (../shared/reference/benchmarks.md). Its public API takes only PEM text, so keeping the
// parsed key means composing the same steps with a KeyObject. Guarded by test/lib-internals.test.ts, which
// requires byte-identical output to mailauth's dkimSign for RSA and Ed25519 keys, alone and together.
import { createHash, sign, type KeyObject } from 'node:crypto';
import { formatSignatureHeaderLine, getSigningHeaderLines, parseHeaders } from 'mailauth/lib/tools.js';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';

export const MAILAUTH_VERSION = '4.13.3';

export interface DkimKey {
  domain: string;
  selector: string;
  /** RSA (rsa-sha256) or Ed25519 (ed25519-sha256). */
  key: KeyObject;
}

/** Where the body starts: after the first empty line (CRLF CRLF, or LF LF as mailauth's parser also accepts). */
function bodyStart(message: Buffer): number {
  const crlf = message.indexOf('\r\n\r\n');
  const lf = message.indexOf('\n\n');
  if (crlf < 0 && lf < 0) return message.length;
  if (lf < 0 || (crlf >= 0 && crlf < lf)) return crlf + 4;
  return lf + 2;
}

/**
 * The DKIM-Signature header fields for `message` (CRLF-terminated, one per key, in order), relaxed/relaxed over
 * the colon-separated `headerList`, as mailauth's dkimSign writes them.
 */
export function dkimSignatures(message: Buffer, keys: DkimKey[], headerList: string, signTime: Date): string {
  if (keys.length === 0) return '';
  const start = bodyStart(message);
  const headers = parseHeaders(message.subarray(0, start));
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(message.subarray(start));
  const bodyHash = hasher.digest('base64');
  const lines = getSigningHeaderLines(headers.parsed, headerList);
  const fields = keys.map(({ domain, selector, key }) => {
    const type = key.asymmetricKeyType;
    if (type !== 'rsa' && type !== 'ed25519') throw new Error(`DKIM signing: unsupported key type ${type}`);
    const algorithm = `${type}-sha256`;
    const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', lines, {
      signingDomain: domain,
      selector,
      algorithm,
      canonicalization: 'relaxed/relaxed',
      signTime,
      bodyHash,
    });
    // RFC 8463 §3: Ed25519 signs the SHA-256 of the canonicalized header; RSA hashes as part of signing.
    const data = type === 'rsa' ? canonicalizedHeader : createHash('sha256').update(canonicalizedHeader).digest();
    dkimHeaderOpts.b = sign(type === 'rsa' ? algorithm : null, data, key).toString('base64');
    return formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true);
  });
  return fields.join('\r\n') + '\r\n';
}
