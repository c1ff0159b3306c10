// A domain's brand logo (BIMI): upload after the SVG Tiny PS check, remove, and the public file. The file goes
// to the blob store, its metadata to domain_brand_logos, and the domain's records gain (or lose) the
// `default._bimi` TXT record pointing at it, all while the domain row is locked, so two uploads to one domain
// happen one after the other and a file is only ever removed when no row names it.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import { notFound, ServiceError } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { isoRequired } from '../time.ts';
import { checkTinyPs } from './svg.ts';
import { desiredRecords, type PlatformHosts } from './records.ts';
import { assertWritable, findDomain, publishedKeys, recordsOf, syncRecords, type DomainRow } from './store.ts';
import { domainEventData } from './present.ts';
import { findLogo, logoBlobKey, logoPath, type BrandLogoRow } from './brand-store.ts';

export interface BrandContext {
  hosts: PlatformHosts;
  blobs: BlobStore;
  /** PUBLIC_BASE_URL: the logo's URL is this plus its path (https in production: BIMI's `l=` requires it). */
  baseUrl: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

async function lockDomain(trx: Knex, teamId: string, id: string): Promise<DomainRow> {
  const domain = await trx<DomainRow>('domains').where({ id, team_id: teamId }).forUpdate().first();
  if (!domain) throw notFound('Domain');
  return domain;
}

/** Makes the domain's records match its logo (or its lack of one) and, when they changed, checks them anew. */
async function syncBrandRecords(
  trx: Knex,
  domain: DomainRow,
  hosts: PlatformHosts,
  logoUrl: string | null,
): Promise<void> {
  const changed = await syncRecords(
    trx,
    domain,
    desiredRecords(domain, await publishedKeys(trx, domain.id), hosts, logoUrl),
  );
  if (!changed) return;
  // As for a settings change (domains.ts): the new record is looked for from now on, on the pending schedule.
  // The BIMI record never decides the domain's status, so a verified domain stays verified meanwhile.
  const now = new Date();
  const [updated] = await trx<DomainRow>('domains')
    .where({ id: domain.id })
    .update({ checking_since: now, next_check_at: now, check_count: 0, updated_at: now })
    .returning('*');
  await recordEvent(trx, domain.team_id, 'domain.updated', domainEventData(updated, await recordsOf(trx, domain.id)));
}

/** Removes a logo's file once no row names it any more (under the domain's lock, so a re-upload cannot race it). */
async function dropUnusedFile(db: Knex, blobs: BlobStore, old: BrandLogoRow): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('domains').where({ id: old.domain_id }).forUpdate().first('id');
    const current = await findLogo(trx, old.domain_id);
    if (current?.blob_key !== old.blob_key) await blobs.delete(old.blob_key);
  });
}

export async function uploadLogo(
  db: Knex,
  teamId: string,
  domainId: string,
  svg: string,
  ctx: BrandContext,
): Promise<BrandLogoRow> {
  assertWritable(await findDomain(db, teamId, domainId));
  const verdict = checkTinyPs(svg);
  if (!verdict.ok) {
    throw new ServiceError('validation_error', `The logo is not SVG Tiny PS: ${verdict.message}`, {
      errors: [{ path: 'svg', message: verdict.message }],
      details: { rule: verdict.rule },
    });
  }
  const data = Buffer.from(svg, 'utf8');
  const sha256 = createHash('sha256').update(data).digest('hex');
  const { row, previous } = await db.transaction(async (trx) => {
    const domain = await lockDomain(trx, teamId, domainId);
    const before = await findLogo(trx, domainId);
    const blobKey = logoBlobKey(teamId, domainId, sha256);
    // The file is durable before a row names it: the public path never points at nothing.
    await ctx.blobs.put(blobKey, data);
    const url = ctx.baseUrl.replace(/\/$/, '') + logoPath(domainId, sha256);
    const [saved] = await trx<BrandLogoRow>('domain_brand_logos')
      .insert({
        domain_id: domainId,
        team_id: teamId,
        sha256,
        bytes: data.length,
        blob_key: blobKey,
        url,
        uploaded_at: new Date(),
      })
      .onConflict('domain_id')
      .merge()
      .returning('*');
    await syncBrandRecords(trx, domain, ctx.hosts, url);
    return { row: saved, previous: before };
  });
  // A new logo has a new address: the old file goes (its BIMI record was replaced with the new one above).
  if (previous && previous.blob_key !== row.blob_key) await dropUnusedFile(db, ctx.blobs, previous);
  return row;
}

export async function getLogo(db: Knex, teamId: string, domainId: string): Promise<BrandLogoRow> {
  await findDomain(db, teamId, domainId);
  const row = await findLogo(db, domainId);
  if (!row) throw notFound('Brand logo');
  return row;
}

export async function deleteLogo(
  db: Knex,
  teamId: string,
  domainId: string,
  ctx: Omit<BrandContext, 'baseUrl'>,
): Promise<void> {
  assertWritable(await findDomain(db, teamId, domainId));
  const removed = await db.transaction(async (trx) => {
    const domain = await lockDomain(trx, teamId, domainId);
    const row = await findLogo(trx, domainId);
    if (!row) throw notFound('Brand logo');
    await trx('domain_brand_logos').where({ domain_id: domainId }).delete();
    await syncBrandRecords(trx, domain, ctx.hosts, null);
    return row;
  });
  await dropUnusedFile(db, ctx.blobs, removed);
}

/** The public file: only the logo a domain has now, by its content address; anything else is not found. */
export async function logoFile(
  db: Knex,
  blobs: BlobStore,
  domainId: string,
  sha256: string,
): Promise<{ row: BrandLogoRow; data: Buffer }> {
  const row = SHA256.test(sha256) ? await findLogo(db, domainId) : undefined;
  const data = row?.sha256 === sha256 ? await blobs.get(row.blob_key) : null;
  if (!row || !data) throw notFound('Brand logo');
  return { row, data };
}

export function presentLogo(row: BrandLogoRow) {
  return {
    object: 'domain_brand_logo' as const,
    domain_id: row.domain_id,
    url: row.url,
    bytes: row.bytes,
    sha256: row.sha256,
    uploaded_at: isoRequired(row.uploaded_at),
  };
}
