// An Ed25519 DKIM key (RFC 8463) beside a domain's RSA key, added and removed by an operator (`npm run cli --
// domain add-ed25519-key`). Its record (`<selector>._domainkey` TXT `v=DKIM1; k=ed25519; p=<raw key>`) is one
// more of the domain's records; the key is added `pending` and signs as a second DKIM-Signature (RFC 8463 §4
// dual signing; mta/delivery/sign.ts signs with every active key) only while that record verifies (verify.ts
// promotes it, and takes it back to pending when the record goes). Receivers that know no Ed25519 ignore the
// signature (RFC 6376 §6.1), so the record never decides the domain's status or whether it may send
// (status.ts decidesStatus): a domain waiting for it keeps sending, RSA-signed.
import { domainToASCII } from 'node:url';
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { ServiceError, notFound } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { generateEd25519Key, newSelector } from './dkim.ts';
import { desiredRecords, type PlatformHosts } from './records.ts';
import {
  assertWritable,
  publishedKeys,
  recordsOf,
  syncRecords,
  type DkimKeyRow,
  type DomainRow,
  type RecordRow,
} from './store.ts';
import { domainEventData } from './present.ts';
import { logoUrlOf } from './brand-store.ts';

export interface Ed25519Context {
  hosts: PlatformHosts;
  secrets: Buffer;
}

/**
 * The domain an operator names: by id, or by name. A name another team has added too (only one team can have
 * it verified) needs `teamId` to say whose.
 */
export async function findOperatorDomain(db: Knex, ref: string, teamId?: string): Promise<DomainRow> {
  const byId = isUuid(ref);
  // As stored: ASCII (IDNA), lower case, no trailing dot; a managed domain's reserved name is found too.
  const name = domainToASCII(ref.trim().replace(/\.$/, '')) || ref.trim().toLowerCase();
  const query = db<DomainRow>('domains').where(byId ? { id: ref } : { name });
  if (teamId) query.where({ team_id: teamId });
  const rows = await query.orderBy('created_at');
  if (rows.length === 0) throw notFound('Domain');
  if (rows.length > 1) {
    throw new ServiceError(
      'validation_error',
      `${rows.length} teams have added ${rows[0].name}: name the team (its id) or give the domain's id.`,
      {
        details: { domain_ids: rows.map((r) => ({ id: r.id, team_id: r.team_id, status: r.status })) },
      },
    );
  }
  return rows[0];
}

async function lockDomain(trx: Knex, id: string): Promise<DomainRow> {
  const domain = await trx<DomainRow>('domains').where({ id }).forUpdate().first();
  if (!domain) throw notFound('Domain');
  assertWritable(domain);
  return domain;
}

/** Recomputes the domain's records from its keys and settings, has them checked now, and records domain.updated. */
async function republish(
  trx: Knex,
  domain: DomainRow,
  ctx: Ed25519Context,
): Promise<{ domain: DomainRow; records: RecordRow[] }> {
  await syncRecords(
    trx,
    domain,
    desiredRecords(domain, await publishedKeys(trx, domain.id), ctx.hosts, await logoUrlOf(trx, domain.id)),
  );
  const now = new Date();
  // The checking window is not reopened: a pending key's record has 72 hours of its own (verify.ts).
  const [updated] = await trx<DomainRow>('domains')
    .where({ id: domain.id })
    .update({ next_check_at: now, updated_at: now })
    .returning('*');
  const records = await recordsOf(trx, domain.id);
  await recordEvent(trx, domain.team_id, 'domain.updated', domainEventData(updated, records));
  return { domain: updated, records };
}

export async function addEd25519Key(
  db: Knex,
  domainId: string,
  ctx: Ed25519Context,
): Promise<{ domain: DomainRow; key: DkimKeyRow; record: RecordRow }> {
  const generated = await generateEd25519Key(ctx.secrets);
  return db.transaction(async (trx) => {
    const domain = await lockDomain(trx, domainId);
    if (domain.sending !== 'enabled') {
      throw new ServiceError(
        'validation_error',
        `Sending is disabled for ${domain.name}: it publishes no DKIM record and signs nothing.`,
      );
    }
    const existing = (await publishedKeys(trx, domain.id)).find((k) => k.algorithm === 'ed25519');
    if (existing) {
      throw new ServiceError(
        'validation_error',
        `${domain.name} already has an Ed25519 key (selector ${existing.selector}, ${existing.status}); remove it first to replace it.`,
      );
    }
    let selector = newSelector();
    while (await trx('dkim_keys').where({ domain_id: domain.id, selector }).first('id')) selector = newSelector();
    const [key] = await trx<DkimKeyRow>('dkim_keys')
      .insert({ id: newId(), team_id: domain.team_id, domain_id: domain.id, selector, ...generated, status: 'pending' })
      .returning('*');
    const { domain: updated, records } = await republish(trx, domain, ctx);
    const record = records.find((r) => r.record === 'DKIM' && r.name === `${selector}._domainkey`);
    if (!record) throw new Error(`the record of selector ${selector} was not published`);
    return { domain: updated, key, record };
  });
}

/**
 * Stops the Ed25519 signature at once (the mta's key cache holds it a few seconds more, DOMAIN_CACHE_MS) and
 * drops its record; the key row stays, retired. Mail it signed moments ago may fail that signature once the
 * customer deletes the record: harmless, as its RSA signature still verifies. Answers the retired selectors.
 */
export async function removeEd25519Key(
  db: Knex,
  domainId: string,
  ctx: Ed25519Context,
): Promise<{ domain: DomainRow; removed: string[] }> {
  return db.transaction(async (trx) => {
    const domain = await lockDomain(trx, domainId);
    const keys = (await publishedKeys(trx, domain.id)).filter((k) => k.algorithm === 'ed25519');
    if (keys.length === 0) throw new ServiceError('not_found', `${domain.name} has no Ed25519 key.`);
    await trx('dkim_keys')
      .whereIn(
        'id',
        keys.map((k) => k.id),
      )
      .update({ status: 'retired', retire_after: new Date() });
    const { domain: updated } = await republish(trx, domain, ctx);
    return { domain: updated, removed: keys.map((k) => k.selector) };
  });
}
