// Revoking a grant from our side (DELETE /oauth/grants/{id}, the dashboard): its row marked, and every artifact
// oidc-provider holds for it (access and refresh tokens, codes, the grant) removed in the same transaction, so no
// token of it is found again; every api copy's token cache forgets it before this answers (revocations.ts).
import type { ApiDeps } from '../deps.ts';
import { revokeGrants, type GrantRow } from '../../shared/oauth/grants.ts';

export async function revokeGrant(
  deps: Pick<ApiDeps, 'db' | 'oauth'>,
  row: GrantRow,
  reason: string,
): Promise<GrantRow> {
  const updated = await deps.db.transaction(async (trx) => {
    await revokeGrants(trx, [row.provider_grant_id], reason);
    return (await trx<GrantRow>('oauth_grants').where({ id: row.id }).first()) ?? row;
  });
  await deps.oauth?.forgetGrant(row.provider_grant_id);
  return updated;
}
