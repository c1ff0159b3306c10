// What a person granted a client for a team (`oauth_grants`), beside oidc-provider's own Grant (whose id is
// provider_grant_id): the team a token acts for, the listing of GET /oauth/grants, and a revocation's when and why,
// kept after oidc-provider has forgotten the grant.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { ServiceError } from '../errors.ts';
import type { Role } from '../accounts/sessions.ts';

export interface GrantRow {
  id: string;
  provider_grant_id: string;
  team_id: string;
  user_id: string;
  client_id: string;
  scopes: string[];
  resources: string[];
  created_at: Date;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

export async function recordGrant(
  db: Knex,
  grant: Pick<GrantRow, 'provider_grant_id' | 'team_id' | 'user_id' | 'client_id' | 'scopes' | 'resources'>,
): Promise<GrantRow> {
  const [row] = await db('oauth_grants')
    .insert({ id: newId(), ...grant })
    .onConflict('provider_grant_id')
    .merge(['scopes', 'resources', 'team_id'])
    .returning('*');
  return row;
}

/** Marks a grant revoked (once: the first reason stays). */
export async function markGrantRevoked(db: Knex, providerGrantId: string, reason: string): Promise<void> {
  await db('oauth_grants')
    .where({ provider_grant_id: providerGrantId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now(), revoked_reason: reason });
}

/**
 * Revokes grants in `trx`: every artifact oidc-provider holds for them (access and refresh tokens, codes, the grant)
 * removed, so no token of them is found again, and each row marked (the first reason stays). The caller makes every
 * api copy's token cache forget them once this commits (api/oauth/server.ts forgetGrant).
 */
export async function revokeGrants(trx: Knex, providerGrantIds: string[], reason: string): Promise<void> {
  if (providerGrantIds.length === 0) return;
  await trx('oauth_models').whereIn('grant_id', providerGrantIds).delete();
  await trx('oauth_models').where({ model: 'Grant' }).whereIn('id', providerGrantIds).delete();
  await trx('oauth_grants')
    .whereIn('provider_grant_id', providerGrantIds)
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now(), revoked_reason: reason });
}

/** The team's grants, newest first, with the client's registered name and logo. */
export async function listGrants(db: Knex, teamId: string, page: ListQuery) {
  const query = db('oauth_grants as g')
    .leftJoin('oauth_models as c', function () {
      this.on('c.id', '=', 'g.client_id').andOnVal('c.model', '=', 'Client');
    })
    .where('g.team_id', teamId)
    .select('g.*', db.raw("c.payload->>'client_name' as client_name"), db.raw("c.payload->>'logo_uri' as logo_uri"));
  return paginate<GrantRow & { client_name: string | null; logo_uri: string | null }>(query, page, 'g.id');
}

/** A grant of the team, or 404 (another team's grant does not exist for this one). */
export async function getGrant(db: Knex, teamId: string, id: string): Promise<GrantRow> {
  const row = await db('oauth_grants').where({ id, team_id: teamId }).first();
  if (!row) throw new ServiceError('not_found', 'OAuth grant not found.');
  return row;
}

/** What a token of this grant acts as: the team and the granting person's role in it now (null: no longer a member). */
export async function grantHolder(db: Knex, providerGrantId: string) {
  const row = await db('oauth_grants as g')
    .leftJoin('team_members as m', function () {
      this.on('m.team_id', '=', 'g.team_id').andOn('m.user_id', '=', 'g.user_id');
    })
    .where('g.provider_grant_id', providerGrantId)
    .first('g.id', 'g.team_id', 'g.user_id', 'g.client_id', 'g.revoked_at', 'm.role');
  return row as
    (Pick<GrantRow, 'id' | 'team_id' | 'user_id' | 'client_id' | 'revoked_at'> & { role: Role | null }) | undefined;
}
