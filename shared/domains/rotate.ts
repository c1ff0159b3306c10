// DKIM rotation: publish a new selector now; verify.ts switches signing to it once its record verifies.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { ServiceError } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { newSelector, takeKey } from './dkim.ts';
import { desiredRecords } from './records.ts';
import { assertWritable, findDomain, publishedKeys, recordsOf, syncRecords, type DomainRow } from './store.ts';
import { domainEventData } from './present.ts';
import { logoUrlOf } from './brand-store.ts';
import type { DomainContext } from './domains.ts';

export async function rotateDkim(
  db: Knex,
  teamId: string,
  id: string,
  ctx: DomainContext,
): Promise<{ domain: DomainRow; selector: string }> {
  assertWritable(await findDomain(db, teamId, id));
  const key = await takeKey(db, ctx.secrets);
  return db.transaction(async (trx) => {
    const domain = await trx<DomainRow>('domains').where({ id, team_id: teamId }).forUpdate().first();
    if (!domain) throw new ServiceError('not_found', 'Domain not found.');
    // Rotation replaces the RSA key; an Ed25519 key waiting for its record (ed25519.ts) does not hold it up.
    if (await trx('dkim_keys').where({ domain_id: id, algorithm: 'rsa', status: 'pending' }).first('id')) {
      throw new ServiceError('validation_error', 'A DKIM rotation is already waiting for its new record to verify.', {
        status: 422,
      });
    }
    const now = new Date();
    let selector = newSelector(now);
    while (await trx('dkim_keys').where({ domain_id: id, selector }).first('id')) selector = newSelector(now);
    await trx('dkim_keys').insert({ id: newId(), team_id: teamId, domain_id: id, selector, ...key, status: 'pending' });
    await syncRecords(
      trx,
      domain,
      desiredRecords(domain, await publishedKeys(trx, id), ctx.hosts, await logoUrlOf(trx, id)),
    );
    // Check the new record on the pending schedule; the domain stays verified meanwhile (verify.ts counts
    // only the active key's record).
    const [updated] = await trx<DomainRow>('domains')
      .where({ id })
      .update({ next_check_at: now, updated_at: now })
      .returning('*');
    await recordEvent(trx, teamId, 'domain.updated', domainEventData(updated, await recordsOf(trx, id)));
    return { domain: updated, selector };
  });
}
