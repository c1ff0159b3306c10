// Tokens the MTA writes into outgoing mail and other processes read back: the envelope sender (return path)
// `bounces+<token>@<custom_return_path>.<domain>` that the inbound MX decodes to attribute a DSN or ARF report
// to its email, and the List-Unsubscribe URL token the api's unsubscribe page decodes. Each carries an id (the
// email's; the recipient's for unsubscribing) and an HMAC tag under a key derived from SECRETS_KEY, so a forged
// bounce or unsubscribe cannot name an email or a recipient it did not receive.
import { createHmac, timingSafeEqual } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

// The derived keys, per SECRETS_KEY buffer: deriving is an HMAC of its own, and the mta tags every message.
const derived = new WeakMap<Buffer, Map<string, Buffer>>();

function derive(secrets: Buffer, purpose: string): Buffer {
  let keys = derived.get(secrets);
  if (!keys) derived.set(secrets, (keys = new Map()));
  let key = keys.get(purpose);
  if (!key) keys.set(purpose, (key = createHmac('sha256', secrets).update(`postwerk/${purpose}/v1`).digest()));
  return key;
}

function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a uuid: ${id}`);
  return Buffer.from(hex, 'hex');
}

function uuidText(bytes: Buffer): string {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function tag(secrets: Buffer, purpose: string, id: Buffer, length: number): Buffer {
  return createHmac('sha256', derive(secrets, purpose)).update(id).digest().subarray(0, length);
}

/** RFC 4648 base32, lower case, unpadded: survives MTAs that change the case of local parts. */
export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function fromBase32(text: string): Buffer | null {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text.toLowerCase()) {
    const i = BASE32.indexOf(ch);
    if (i < 0) return null;
    value = ((value << 5) | i) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

const RP_TAG = 8;

/**
 * 16 bytes of email id and an 8-byte tag: 39 base32 characters (the local part stays under 64, RFC 5321 §4.5.3.1.1).
 */
export function returnPathToken(secrets: Buffer, emailId: string): string {
  const id = uuidBytes(emailId);
  return base32(Buffer.concat([id, tag(secrets, 'return-path', id, RP_TAG)]));
}

export function returnPathAddress(secrets: Buffer, emailId: string, returnPathLabel: string, domain: string): string {
  return `bounces+${returnPathToken(secrets, emailId)}@${returnPathLabel}.${domain}`;
}

/** The email id a return-path address names, or null when it is not one of ours (or its tag is wrong). */
export function readReturnPathAddress(secrets: Buffer, address: string): string | null {
  const m = /^bounces\+([a-z2-7]{39})@/i.exec(address.trim());
  const bytes = m && fromBase32(m[1]);
  if (!bytes || bytes.length !== 16 + RP_TAG) return null;
  const id = bytes.subarray(0, 16);
  return timingSafeEqual(bytes.subarray(16), tag(secrets, 'return-path', id, RP_TAG)) ? uuidText(id) : null;
}

/** The token of the List-Unsubscribe URL `<PUBLIC_BASE_URL>/unsubscribe/<token>`: recipient id and a 16-byte tag. */
export function unsubscribeToken(secrets: Buffer, recipientId: string): string {
  const id = uuidBytes(recipientId);
  return Buffer.concat([id, tag(secrets, 'unsubscribe', id, 16)]).toString('base64url');
}

export function readUnsubscribeToken(secrets: Buffer, token: string): string | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length !== 32) return null;
  const id = bytes.subarray(0, 16);
  return timingSafeEqual(bytes.subarray(16), tag(secrets, 'unsubscribe', id, 16)) ? uuidText(id) : null;
}
