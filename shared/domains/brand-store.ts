// Data access of a domain's brand logo (BIMI). Functions take `db` (knex or a transaction) first.
import type { Knex } from 'knex';

export interface BrandLogoRow {
  domain_id: string;
  team_id: string;
  /** 64 lowercase hex characters: the file's content address. */
  sha256: string;
  bytes: number;
  blob_key: string;
  /** The public address as uploaded: the `l=` value of the domain's BIMI record. */
  url: string;
  uploaded_at: Date;
}

/** The public path of a logo: content-addressed, so it can be cached for good and a new logo gets a new URL. */
export function logoPath(domainId: string, sha256: string): string {
  return `/brand/${domainId}/${sha256}.svg`;
}

export function logoBlobKey(teamId: string, domainId: string, sha256: string): string {
  return `brand/${teamId}/${domainId}/${sha256}.svg`;
}

export function findLogo(db: Knex, domainId: string): Promise<BrandLogoRow | undefined> {
  return db<BrandLogoRow>('domain_brand_logos').where({ domain_id: domainId }).first();
}

/** The `l=` URL the domain's BIMI record carries, or null: what every caller of desiredRecords passes. */
export async function logoUrlOf(db: Knex, domainId: string): Promise<string | null> {
  const row = await db('domain_brand_logos').where({ domain_id: domainId }).first('url');
  return row?.url ?? null;
}
