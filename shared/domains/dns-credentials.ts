// The TSIG credential auto-configure uses: taken from the request, or the one the customer asked us to keep
// (its secret sealed with the secrets key, never stored or logged in the clear).
import { isIP } from 'node:net';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { ServiceError, notFound, type FieldError } from '../errors.ts';
import { open, seal } from '../secrets.ts';
import { TSIG_ALGORITHMS, type TsigAlgorithm, type TsigKey } from '../dns/tsig.ts';
import { normalizeDomainName } from './names.ts';
import type { ReservedTld } from './reserved.ts';

export interface CredentialInput {
  server?: string;
  port?: number;
  zone?: string;
  key_name?: string;
  algorithm?: TsigAlgorithm;
  secret?: string;
}

export interface DnsCredential {
  /** Host name or IP address as the customer gave it. */
  server: string;
  port: number;
  zone: string;
  key: TsigKey;
}

interface CredentialRow {
  id: string;
  team_id: string;
  domain_id: string;
  server: string;
  port: number;
  zone: string;
  key_name: string;
  algorithm: TsigAlgorithm;
  secret_sealed: string;
}

const HOST = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** RFC 8945 §6 asks for keys as long as the hash; shorter than 16 bytes is a typo, not a key. */
const MIN_SECRET_BYTES = 16;

export function findCredentialRow(db: Knex, domainId: string): Promise<CredentialRow | undefined> {
  return db<CredentialRow>('domain_dns_credentials').where({ domain_id: domainId }).first();
}

function invalid(errors: FieldError[]): ServiceError {
  return new ServiceError('validation_error', errors.map((e) => `\`${e.path}\`: ${e.message}`).join(' '), { errors });
}

/**
 * The credential of this request, checked; throws 422 naming each field that is wrong. `reservedAllowed`: the
 * reserved TLDs a zone may be under (RESERVED_TLDS_ALLOWED).
 */
export function parseCredential(
  input: CredentialInput,
  domainName: string,
  reservedAllowed: readonly ReservedTld[],
): DnsCredential {
  const missing = (['server', 'key_name', 'secret'] as const).filter((f) => !input[f]?.trim());
  if (missing.length) {
    throw new ServiceError(
      'missing_required_field',
      `Missing ${missing.map((f) => `\`${f}\``).join(', ')}: give the DNS server and the TSIG key, or keep a credential first (keep_credential).`,
      {
        errors: missing.map((path) => ({ path, message: 'required' })),
      },
    );
  }
  const errors: FieldError[] = [];
  const server = input
    .server!.trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (!isIP(server) && !HOST.test(server))
    errors.push({ path: 'server', message: 'a host name or an IP address (no port: use `port`)' });
  const keyName = input.key_name!.trim().toLowerCase().replace(/\.$/, '');
  if (!HOST.test(keyName))
    errors.push({
      path: 'key_name',
      message:
        'the TSIG key name as the server knows it: a domain name such as `postwerk-update` or `update.example.com`',
    });
  const secretText = input.secret!.replace(/\s+/g, '');
  const secret = Buffer.from(secretText, 'base64');
  if (!BASE64.test(secretText) || secret.length < MIN_SECRET_BYTES)
    errors.push({
      path: 'secret',
      message: `the TSIG secret in base64, at least ${MIN_SECRET_BYTES} bytes (tsig-keygen prints it)`,
    });
  let zone = domainName;
  if (input.zone !== undefined) {
    try {
      zone = normalizeDomainName(input.zone, reservedAllowed, 'zone');
    } catch (err) {
      errors.push(...((err as ServiceError).options.errors ?? [{ path: 'zone', message: 'not a domain name' }]));
    }
  }
  if (!errors.some((e) => e.path === 'zone') && domainName !== zone && !domainName.endsWith(`.${zone}`)) {
    errors.push({ path: 'zone', message: `the zone must be ${domainName} or a parent of it` });
  }
  if (errors.length) throw invalid(errors);
  return {
    server,
    port: input.port ?? 53,
    zone,
    key: { name: keyName, algorithm: input.algorithm ?? 'hmac-sha256', secret },
  };
}

export function credentialFromRow(row: CredentialRow, secrets: Buffer): DnsCredential {
  const algorithm = row.algorithm in TSIG_ALGORITHMS ? row.algorithm : 'hmac-sha256';
  return {
    server: row.server,
    port: row.port,
    zone: row.zone,
    key: { name: row.key_name, algorithm, secret: Buffer.from(open(secrets, row.secret_sealed), 'base64') },
  };
}

/** Keeps (or replaces) the domain's credential, the secret sealed. */
export async function keepCredential(
  db: Knex,
  domain: { id: string; team_id: string },
  c: DnsCredential,
  secrets: Buffer,
): Promise<void> {
  const now = new Date();
  await db('domain_dns_credentials')
    .insert({
      id: newId(),
      team_id: domain.team_id,
      domain_id: domain.id,
      server: c.server,
      port: c.port,
      zone: c.zone,
      key_name: c.key.name,
      algorithm: c.key.algorithm,
      secret_sealed: seal(secrets, c.key.secret.toString('base64')),
      created_at: now,
      updated_at: now,
    })
    .onConflict('domain_id')
    .merge(['server', 'port', 'zone', 'key_name', 'algorithm', 'secret_sealed', 'updated_at']);
}

export async function forgetCredential(db: Knex, domainId: string): Promise<void> {
  const removed = await db('domain_dns_credentials').where({ domain_id: domainId }).delete();
  if (!removed) throw notFound('Kept DNS credential');
}
