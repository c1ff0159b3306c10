// Signed links: the credential of every public download (sent and received attachments, raw messages) and of
// share links. A link names one object of one team until an instant; an HMAC-SHA256 over exactly those claims
// (kind, team id, object id, expiry) is its token, so nothing is stored and a token fits no other object, no
// other team, no other kind of link and no later expiry. Every refusal looks the same (spec, Receiving 1-3).
import { createHmac } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { secretsKey } from '../secrets.ts';
import { safeEqual } from '../tokens.ts';
import { isUuid } from '../ids.ts';
import type { BlobStore } from '../blobs.ts';

/** A download link is valid for fifteen minutes (spec, Receiving 1). */
export const DOWNLOAD_LINK_TTL_SECONDS = 15 * 60;

export interface LinkClaims {
  /**
   * What the link opens (`email_attachment`, `received_attachment`, `email_share`, ...): a token of one kind never
   * opens another.
   */
  kind: string;
  teamId: string;
  objectId: string;
  /** Unix seconds: the link works strictly before this instant. */
  expires: number;
}

const keys = new WeakMap<Buffer, Buffer>();

/** The links' own key, derived from the secrets key: a link token never doubles as anything else's MAC. */
export function linkKey(config: Pick<Config, 'SECRETS_KEY' | 'SECRETS_KEY_FILE'>): Buffer {
  const root = secretsKey(config);
  let key = keys.get(root);
  if (!key) {
    key = createHmac('sha256', root).update('download-links').digest();
    keys.set(root, key);
  }
  return key;
}

const FIELD = /^[A-Za-z0-9_.:/-]{1,200}$/;

function message(c: LinkClaims): string {
  // Fields are plain ids (no separator can occur in them), so two different claim sets never sign the same text.
  for (const v of [c.kind, c.teamId, c.objectId])
    if (!FIELD.test(v)) throw new Error(`signed link: unusable claim ${JSON.stringify(v)}`);
  if (!Number.isSafeInteger(c.expires) || c.expires < 0)
    throw new Error('signed link: expires must be whole unix seconds');
  return ['postwerk-link-v1', c.kind, c.teamId, c.objectId, String(c.expires)].join('\n');
}

/** The token of a link: HMAC-SHA256 of the claims, base64url (43 characters). */
export function signLink(key: Buffer, claims: LinkClaims): string {
  return createHmac('sha256', key).update(message(claims)).digest('base64url');
}

export function nowSeconds(now: Date = new Date()): number {
  return Math.floor(now.getTime() / 1000);
}

/**
 * True when `token` is the token of `claims` and the link has not expired at `now`. A link whose expiry lies
 * further ahead than `maxTtlSeconds` is refused too, so a token can never outlive its kind's validity.
 */
export function verifyLink(
  key: Buffer,
  claims: LinkClaims,
  token: unknown,
  now: Date = new Date(),
  maxTtlSeconds = DOWNLOAD_LINK_TTL_SECONDS,
): boolean {
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  if (!Number.isSafeInteger(claims.expires)) return false;
  const current = nowSeconds(now);
  if (claims.expires <= current || claims.expires > current + maxTtlSeconds) return false;
  let expected: string;
  try {
    expected = signLink(key, claims);
  } catch {
    return false;
  }
  return safeEqual(expected, token);
}

/** `expires` as a link carries it in its query: digits only (no sign, exponent, spaces or repeats). */
export function parseExpires(value: unknown): number | null {
  if (typeof value !== 'string' || !/^[0-9]{1,12}$/.test(value)) return null;
  return Number(value);
}

/** A fresh download link for one object: the query values and when it stops working. */
export function issueLink(
  key: Buffer,
  claims: Omit<LinkClaims, 'expires'>,
  now: Date = new Date(),
  ttlSeconds = DOWNLOAD_LINK_TTL_SECONDS,
) {
  const expires = nowSeconds(now) + ttlSeconds;
  return { expires, token: signLink(key, { ...claims, expires }), expires_at: new Date(expires * 1000).toISOString() };
}

/** `<base><path>?expires=…&token=…`: the full URL a client copies as given. */
export function linkUrl(baseUrl: string, path: string, link: { expires: number; token: string }): string {
  return `${baseUrl}${path}?expires=${link.expires}&token=${link.token}`;
}

// Self-contained tokens (share links): the claims travel inside the token, `<payload>.<signature>`, where the
// payload is the team id, the object id (both UUIDs, 16 bytes each) and the expiry (6 bytes), base64url.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidText = (b: Buffer) => b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

export function sealLink(key: Buffer, claims: LinkClaims): string {
  const teamId = claims.teamId.toLowerCase();
  const objectId = claims.objectId.toLowerCase();
  if (!UUID.test(teamId) || !UUID.test(objectId)) throw new Error('sealed link: team and object ids must be UUIDs');
  const expires = Buffer.alloc(6);
  expires.writeUIntBE(claims.expires, 0, 6);
  const payload = Buffer.concat([uuidBytes(teamId), uuidBytes(objectId), expires]).toString('base64url');
  return `${payload}.${signLink(key, { ...claims, teamId, objectId })}`;
}

/** The claims of a sealed token of `kind`, or null for anything tampered, malformed, of another kind or expired. */
export function openLink(
  key: Buffer,
  kind: string,
  token: unknown,
  now: Date = new Date(),
  maxTtlSeconds = DOWNLOAD_LINK_TTL_SECONDS,
): LinkClaims | null {
  if (typeof token !== 'string') return null;
  const m = /^([A-Za-z0-9_-]{51})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const bytes = Buffer.from(m[1], 'base64url');
  // Only the canonical spelling of the payload: one link, one token.
  if (bytes.length !== 38 || bytes.toString('base64url') !== m[1]) return null;
  const claims: LinkClaims = {
    kind,
    teamId: uuidText(bytes.subarray(0, 16)),
    objectId: uuidText(bytes.subarray(16, 32)),
    expires: bytes.readUIntBE(32, 6),
  };
  return verifyLink(key, claims, m[2], now, maxTtlSeconds) ? claims : null;
}

/**
 * Every refused link, whatever the reason (bad or missing signature, expired, unknown or deleted object, another
 * team's).
 */
export function linkRefused(): ServiceError {
  return new ServiceError('not_found', 'This link is invalid or has expired.');
}

/** The query of a signed download, as the route's schema hands it on ('' for a missing or malformed value). */
export interface LinkQuery {
  expires: string;
  token: string;
}

/** The expiry of a link that can still be valid (the path ids well formed, not yet expired), or the one refusal:
 * checked before any lookup. */
export function liveLinkExpiry(q: LinkQuery, ...ids: string[]): number {
  const expires = parseExpires(q.expires);
  if (expires === null || !q.token || !ids.every(isUuid) || expires <= nowSeconds()) throw linkRefused();
  return expires;
}

/** The object a download link opens: its own team (the link is checked against it, so a link signed for another
 * team's object fits nothing) and where its bytes are: a blob, or `read()` for bytes kept elsewhere (a received
 * message's in received_raw), called only once the link is verified. */
export type DownloadObject = {
  id: string;
  team_id: string;
  filename: string | null;
  content_type: string | null;
} & ({ blob_key: string } | { read: () => Promise<Buffer | null> });

/** The rest of every signed download once the object is looked up: the token must fit this kind, the object's
 * team and id and the expiry, the bytes must exist; then they are served. Any miss is the one 404. */
export async function serveSignedDownload(
  ctx: Context,
  o: {
    key: Buffer;
    kind: string;
    expires: number;
    token: string;
    blobs: BlobStore;
    object: DownloadObject | undefined;
  },
): Promise<void> {
  const { object } = o;
  if (!object) throw linkRefused();
  if (!verifyLink(o.key, { kind: o.kind, teamId: object.team_id, objectId: object.id, expires: o.expires }, o.token))
    throw linkRefused();
  const data = 'read' in object ? await object.read() : await o.blobs.get(object.blob_key);
  if (!data) throw linkRefused();
  serveDownload(ctx, { data, filename: object.filename, contentType: object.content_type });
}

// Serving a download (spec, Receiving 3): always as an attachment, never sniffed, and with a content type only
// when it is inert in a browser; anything else (text/html, image/svg+xml, scripts, ...) is application/octet-stream.

const INERT_TYPES = new Set([
  'application/pdf',
  'application/zip',
  'application/gzip',
  'application/x-gzip',
  'application/x-7z-compressed',
  'application/x-tar',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/tiff',
  'image/heic',
  'image/avif',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'audio/mp4',
  'video/mp4',
  'video/webm',
  'video/quicktime',
  'text/plain',
  'text/csv',
  'text/calendar',
  'message/rfc822',
]);

/** The content type a download is served with: the stored type's own (no parameters) if inert, else octet-stream. */
export function servedContentType(stored: string | null | undefined): string {
  const base = (stored ?? '').split(';')[0].trim().toLowerCase();
  return INERT_TYPES.has(base) ? base : 'application/octet-stream';
}

/** RFC 5987 attr-chars stay; every other byte of the UTF-8 name is percent-encoded. */
function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<name>` (RFC 6266, RFC 5987). */
export function contentDisposition(filename: string | null | undefined, fallback = 'attachment'): string {
  // No path separators, no control characters; a name left empty takes the fallback.
  const printable = [...(filename ?? '')].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f).join('');
  const name = printable.replace(/[/\\]/g, '_').trim().slice(0, 255) || fallback;
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

/** Answers `data` as a file download on `ctx`. */
export function serveDownload(
  ctx: Context,
  file: {
    data: Buffer;
    filename: string | null | undefined;
    contentType: string | null | undefined;
    fallbackName?: string;
  },
): void {
  ctx.status = 200;
  ctx.body = file.data;
  ctx.set('Content-Type', servedContentType(file.contentType));
  ctx.set('Content-Disposition', contentDisposition(file.filename, file.fallbackName));
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
  ctx.set('Cache-Control', 'private, no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
}
