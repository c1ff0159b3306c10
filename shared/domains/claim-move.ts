// Completing a claim: in the caller's transaction, every other team's row for the name is deleted (its DKIM
// keys, records and the sending keys bound to it go with it, by cascade, so that team can no longer send from
// it) and the claiming team receives the domain under the claim's `domain_id` with a fresh DKIM key and its
// own records to publish: nothing of the old team's setup (keys, selectors) is carried over, an Ed25519 key
// an operator added for it (ed25519.ts) included: the new team's operator adds one again if it wants one.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { recordEvent } from '../events.ts';
import { newSelector, takeKey } from './dkim.ts';
import { desiredRecords, type DomainSettings } from './records.ts';
import { publishedKeys, recordsOf, syncRecords, type DomainRow } from './store.ts';
import { domainEventData } from './present.ts';
import type { ClaimContext, ClaimRow } from './claims.ts';

export async function moveDomain(
  trx: Knex,
  claim: ClaimRow,
  holders: DomainRow[],
  ctx: Pick<ClaimContext, 'hosts' | 'secrets'>,
  now: Date,
): Promise<DomainRow> {
  for (const holder of holders) {
    const data = domainEventData(holder, await recordsOf(trx, holder.id));
    await trx('domains').where({ id: holder.id }).delete();
    await recordEvent(trx, holder.team_id, 'domain.deleted', data);
  }

  const settings: DomainSettings = {
    custom_return_path: claim.custom_return_path,
    open_tracking: claim.open_tracking,
    click_tracking: claim.click_tracking,
    tracking_subdomain: claim.tracking_subdomain,
    sending: 'enabled',
    receiving: 'disabled',
    receiving_host: '@',
    // A claim takes no TLS policy (as Resend's); PATCH /domains/{id} sets one afterwards.
    tls: 'opportunistic',
  };
  // Inside the transaction: if it rolls back, the pooled key goes back to the pool.
  const key = await takeKey(trx, ctx.secrets);
  const [domain] = await trx<DomainRow>('domains')
    .insert({
      id: claim.domain_id,
      team_id: claim.team_id,
      name: claim.name,
      region: claim.region,
      ...settings,
      // The new records are checked by the worker from now on, as for a domain just added.
      status: 'not_started',
      checking_since: now,
      next_check_at: now,
      created_at: now,
      updated_at: now,
    })
    .returning('*');
  const selector = newSelector(now);
  await trx('dkim_keys').insert({
    id: newId(),
    team_id: claim.team_id,
    domain_id: domain.id,
    selector,
    ...key,
    status: 'active',
    activated_at: now,
  });
  await syncRecords(trx, domain, desiredRecords(settings, await publishedKeys(trx, domain.id), ctx.hosts));
  await recordEvent(trx, claim.team_id, 'domain.created', domainEventData(domain, await recordsOf(trx, domain.id)));
  return domain;
}
