// The platform's DKIM key for the managed domains (migrations/20261123010000_platform_dkim_keys.ts). A managed
// domain `<word>.<MANAGED_DOMAIN_HOST>` publishes no records of its own, so its mail is signed `d=`
// MANAGED_DOMAIN_HOST, its parent: the same organizational domain as the From, so DMARC's relaxed alignment
// holds (RFC 7489 §3.1.1). The selector is MANAGED_DKIM_SELECTOR; the operator publishes the record once
// (`npm run cli -- managed-dkim`, also logged at mta start).
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { generateRsaKey } from './dkim.ts';
import { dkimValue } from './records.ts';

export type ManagedDkimConfig = Pick<Config, 'MANAGED_DOMAIN_HOST' | 'MANAGED_DKIM_SELECTOR'>;

export interface PlatformKeyRow {
  domain: string;
  selector: string;
  algorithm: 'rsa';
  /** base64 of the DER SubjectPublicKeyInfo: the `p=` value */
  public_key: string;
  /** The PKCS#8 PEM sealed with the secrets key (shared/secrets.ts), never stored in clear. */
  private_key_sealed: string;
  created_at: Date;
}

const TABLE = 'platform_dkim_keys';

/**
 * The key of (MANAGED_DOMAIN_HOST, MANAGED_DKIM_SELECTOR), created when absent. Processes that find it absent at
 * once each generate one, but the insert does nothing on conflict and everyone reads back the row that won, so
 * they all sign with the key whose record is published.
 */
export async function ensurePlatformKey(db: Knex, secrets: Buffer, config: ManagedDkimConfig): Promise<PlatformKeyRow> {
  const where = { domain: config.MANAGED_DOMAIN_HOST, selector: config.MANAGED_DKIM_SELECTOR };
  const found = await db<PlatformKeyRow>(TABLE).where(where).first();
  if (found) return found;
  // Generated, not taken from dkim_key_pool: the pool row would be lost to the loser of a race, and this
  // happens once per selector.
  await db(TABLE)
    .insert({ ...where, ...(await generateRsaKey(secrets)) })
    .onConflict(['domain', 'selector'])
    .ignore();
  const row = await db<PlatformKeyRow>(TABLE).where(where).first();
  if (!row) throw new Error(`platform DKIM key ${where.selector}._domainkey.${where.domain} vanished after its insert`);
  return row;
}

export interface PlatformDkimRecord {
  /** Fully qualified: `<selector>._domainkey.<MANAGED_DOMAIN_HOST>`. */
  name: string;
  type: 'TXT';
  value: string;
}

/** The TXT record that publishes the key (RFC 6376 §3.6.2.1), as the domains' DKIM records are written. */
export function platformDkimRecord(
  key: Pick<PlatformKeyRow, 'domain' | 'selector' | 'algorithm' | 'public_key'>,
): PlatformDkimRecord {
  return { name: `${key.selector}._domainkey.${key.domain}`, type: 'TXT', value: dkimValue(key) };
}
