// A session's access to a team named in a path: the user must be a member (else the team does not exist for them:
// 404) and their role must reach `need` (else 403 invalid_permission).
import { ServiceError } from '../../shared/errors.ts';
import { roleRank, type Role } from '../../shared/accounts/sessions.ts';
import { membership } from '../../shared/teams/members.ts';
import type { TeamRow } from '../../shared/teams/teams.ts';
import type { Knex } from 'knex';

export async function teamAccess(
  db: Knex,
  userId: string,
  teamId: string,
  need: Role,
): Promise<{ team: TeamRow; role: Role }> {
  const found = await membership(db, userId, teamId);
  if (roleRank[found.role] < roleRank[need])
    throw new ServiceError('invalid_permission', `This needs the ${need} role in the team; yours is ${found.role}.`, {
      status: 403,
    });
  return found;
}
