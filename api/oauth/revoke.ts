// Revoking a grant from our side (DELETE /oauth/grants/{id}, the dashboard): its row marked, and every artifact
// oidc-provider holds for it (access and refresh tokens, codes, the grant) removed in the same transaction, so no
// token of it is found again; every api copy's token cache forgets it before this answers (revocations.ts).
import type { ApiDeps } from '../deps.ts';
import type { GrantRow } from '../../shared/oauth/grants.ts';

export async function revokeGrant(
  deps: Pick<ApiDeps, 'db' | 'oauth'>,
  row: GrantRow,
  reason: string,
): Promise<GrantRow> {
  const updated = await deps.db.transaction(async (trx) => {
    await trx('oauth_models').where({ grant_id: row.provider_grant_id }).delete();
    await trx('oauth_models').where({ model: 'Grant', id: row.provider_grant_id }).delete();
    const [marked] = await trx('oauth_grants')
      .where({ id: row.id })
      .whereNull('revoked_at')
      .update({ revoked_at: trx.fn.now(), revoked_reason: reason })
      .returning('*');
    return marked ?? row;
  });
  await deps.oauth?.forgetGrant(row.provider_grant_id);
  return updated;
}
