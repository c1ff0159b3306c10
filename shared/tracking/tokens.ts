// The tokens of the open pixel (`/o/<token>`) and of tracked links (`/c/<token>`) on a domain's tracking host. A
// token names one recipient (and, for a link, the link's position and its URL) and carries an HMAC tag under a key
// of the sending domain alone, derived from SECRETS_KEY: a token cannot be forged, cannot be made to name another
// recipient or another URL, and a token minted for one domain (so one team) is refused on every other domain's
// tracking host. Nothing is stored: the click redirect goes to the URL the tag covers, which the mta took from the
// message itself (links.ts), so the redirector is never open.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TrackingKind = 'open' | 'click';

const KIND_BYTE: Record<TrackingKind, number> = { open: 0x01, click: 0x02 };
/** 96 bits of HMAC-SHA256: far beyond guessing at any request rate, and short in a link. */
const TAG_BYTES = 12;
/** Longer links are left as they are (links.ts): a URL in a token must stay a reasonable link. */
export const MAX_URL_BYTES = 2048;
const ID_BYTES = 16;

// Derived keys per SECRETS_KEY buffer and domain: the mta tags every link of every copy, the api reads every hit.
const keys = new WeakMap<Buffer, Map<string, Buffer>>();
const KEYS_PER_SECRET = 10_000;

/** The key of one sending domain's tokens. */
export function domainKey(secrets: Buffer, domainId: string): Buffer {
  let byDomain = keys.get(secrets);
  if (!byDomain) keys.set(secrets, (byDomain = new Map()));
  let key = byDomain.get(domainId);
  if (!key) {
    const root = createHmac('sha256', secrets).update('postwerk/tracking/v1').digest();
    key = createHmac('sha256', root).update(`domain:${domainId.toLowerCase()}`).digest();
    if (byDomain.size >= KEYS_PER_SECRET) byDomain.delete(byDomain.keys().next().value!);
    byDomain.set(domainId, key);
  }
  return key;
}

function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a uuid: ${id}`);
  return Buffer.from(hex, 'hex');
}

const uuidText = (b: Buffer) => b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

const tag = (key: Buffer, payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);

function seal(key: Buffer, payload: Buffer): string {
  return Buffer.concat([payload, tag(key, payload)]).toString('base64url');
}

/** A URL a token may carry: absolute http(s), printable ASCII only (links.ts percent-encodes the rest), bounded. */
export function trackableUrl(url: string): boolean {
  if (url.length > MAX_URL_BYTES || !/^https?:\/\/[\x21-\x7e]+$/i.test(url)) return false;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

export function openToken(key: Buffer, recipientId: string): string {
  return seal(key, Buffer.concat([Buffer.of(KIND_BYTE.open), uuidBytes(recipientId)]));
}

/** `index`: the link's position among the message's tracked links (0-based, below 65536). */
export function clickToken(key: Buffer, recipientId: string, index: number, url: string): string {
  if (!trackableUrl(url)) throw new Error('clickToken: not a trackable URL');
  const position = Buffer.alloc(2);
  position.writeUInt16BE(index);
  return seal(key, Buffer.concat([Buffer.of(KIND_BYTE.click), uuidBytes(recipientId), position, Buffer.from(url)]));
}

export interface TokenClaims {
  kind: TrackingKind;
  recipientId: string;
  /** Clicks only. */
  linkIndex: number | null;
  url: string | null;
}

// base64url of at least kind + id + tag; a click token's URL is bounded.
const TOKEN = /^[A-Za-z0-9_-]{39,2800}$/;

/** What a token of this domain's key says, or null for anything else (tampered, another domain's, malformed). */
export function readToken(key: Buffer, kind: TrackingKind, token: string): TokenClaims | null {
  if (!TOKEN.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  // Only the canonical spelling: one token per claim, so none can be varied to look new.
  if (bytes.toString('base64url') !== token) return null;
  const fixed = 1 + ID_BYTES + (kind === 'click' ? 2 : 0);
  if (bytes.length < fixed + TAG_BYTES || bytes[0] !== KIND_BYTE[kind]) return null;
  const payload = bytes.subarray(0, bytes.length - TAG_BYTES);
  if (!timingSafeEqual(bytes.subarray(payload.length), tag(key, payload))) return null;
  const recipientId = uuidText(payload.subarray(1, 1 + ID_BYTES));
  if (kind === 'open') return payload.length === fixed ? { kind, recipientId, linkIndex: null, url: null } : null;
  const url = payload.subarray(fixed).toString('latin1');
  // Tagged by us, so well-formed; checked again all the same, as the redirect's target.
  if (!trackableUrl(url)) return null;
  return { kind, recipientId, linkIndex: payload.readUInt16BE(1 + ID_BYTES), url };
}
