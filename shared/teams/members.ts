// The people of a team and their roles (admin, member, viewer). A team always keeps an admin: the last one can
// neither leave, be removed nor lose the role. Data access takes `db` first, so a caller composes one transaction.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { notFound, ServiceError } from '../errors.ts';
import { isoRequired } from '../time.ts';
import { createKey } from '../api-keys/keys.ts';
import { createManagedDomain } from '../domains/managed.ts';
import { createTeam, type TeamRow } from './teams.ts';

export type Role = 'admin' | 'member' | 'viewer';

export interface MemberRow {
  id: string;
  team_id: string;
  user_id: string;
  role: Role;
  sso_exempt: boolean;
  created_at: Date;
}

/** What a member row shows (spec TeamMember): the person's address and name, and whether MFA is on. */
export interface MemberView extends MemberRow {
  email: string;
  name: string | null;
  mfa_enabled_at: Date | null;
}

/** The spec's Team of the dashboard. */
export function presentDashboardTeam(t: TeamRow) {
  return {
    object: 'team' as const,
    id: t.id,
    name: t.name,
    slug: t.slug,
    risk_state: riskState(t),
    created_at: isoRequired(t.created_at),
  };
}

/** `normal`, `suspended` (by the operator) or `deletion_scheduled`. */
export function riskState(t: Pick<TeamRow, 'status'> & { deletion_status?: string }): string {
  if (t.status === 'suspended') return 'suspended';
  if (t.deletion_status && t.deletion_status !== 'none') return 'deletion_scheduled';
  return 'normal';
}

export function presentMember(m: MemberView) {
  return {
    object: 'team_member' as const,
    id: m.id,
    user_id: m.user_id,
    email: m.email,
    name: m.name,
    role: m.role,
    mfa_enabled: Boolean(m.mfa_enabled_at),
    sso_exempt: m.sso_exempt,
    created_at: isoRequired(m.created_at),
  };
}

/**
 * A team made by a signed-in user: its managed domain, the user as its admin, and on request a first full_access
 * key (its token shown once), in one transaction.
 */
export async function createTeamForUser(
  db: Knex,
  userId: string,
  input: { name: string; api_key?: boolean },
  managedHost: string,
) {
  return db.transaction(async (trx) => {
    const team = await createTeam(trx, { name: input.name.trim() });
    await createManagedDomain(trx, team.id, managedHost);
    await trx('team_members').insert({ id: newId(), team_id: team.id, user_id: userId, role: 'admin' });
    const key = input.api_key ? await createKey(trx, team.id, { name: 'Default', permission: 'full_access' }) : null;
    return { team, key };
  });
}

/** The teams the user belongs to, oldest membership first. */
export function teamsOf(db: Knex, userId: string): Promise<TeamRow[]> {
  return db('teams as t')
    .join('team_members as m', 'm.team_id', 't.id')
    .where({ 'm.user_id': userId })
    .orderBy('m.created_at')
    .select<TeamRow[]>('t.*');
}

/** The user's membership of `teamId` with the team, or 404 (a team the user is not in does not exist for them). */
export async function membership(db: Knex, userId: string, teamId: string): Promise<{ team: TeamRow; role: Role }> {
  const row = await db('team_members as m')
    .join('teams as t', 't.id', 'm.team_id')
    .where({ 'm.user_id': userId, 'm.team_id': teamId })
    .first(db.raw('row_to_json(t.*) as team'), 'm.role');
  if (!row) throw notFound('Team');
  return { team: row.team as TeamRow, role: row.role as Role };
}

const memberColumns = ['m.*', 'u.email', 'u.name', 'u.mfa_enabled_at'] as const;

export function listMembers(db: Knex, teamId: string): Promise<MemberView[]> {
  return db('team_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.team_id': teamId })
    .orderBy('m.created_at')
    .select<MemberView[]>(...memberColumns);
}

export async function getMember(db: Knex, teamId: string, memberId: string): Promise<MemberView> {
  const row = await db('team_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.team_id': teamId, 'm.id': memberId })
    .first<MemberView | undefined>(...memberColumns);
  if (!row) throw notFound('Team member');
  return row;
}

const lastAdmin = () =>
  new ServiceError('validation_error', 'A team needs an admin: make another member admin first.', {
    errors: [{ path: 'role', message: 'the last admin of the team' }],
  });

/** Locks the team's member rows and refuses when `memberId` is its only admin (called before a change of it). */
async function keepAnAdmin(trx: Knex, teamId: string, memberId: string): Promise<void> {
  const admins = await trx('team_members').where({ team_id: teamId, role: 'admin' }).forUpdate().pluck('id');
  if (admins.length === 1 && admins[0] === memberId) throw lastAdmin();
}

export async function setRole(db: Knex, teamId: string, memberId: string, role: Role): Promise<MemberView> {
  return db.transaction(async (trx) => {
    const member = await getMember(trx, teamId, memberId);
    if (member.role === 'admin' && role !== 'admin') await keepAnAdmin(trx, teamId, memberId);
    await trx('team_members').where({ id: memberId, team_id: teamId }).update({ role });
    return { ...member, role };
  });
}

/** Removes a member (an admin's act, or the member leaving); the last admin stays. */
export async function removeMember(db: Knex, teamId: string, memberId: string): Promise<MemberView> {
  return db.transaction(async (trx) => {
    const member = await getMember(trx, teamId, memberId);
    if (member.role === 'admin') await keepAnAdmin(trx, teamId, memberId);
    await trx('team_members').where({ id: memberId, team_id: teamId }).delete();
    // Their sessions in this team lose it as their current team at their next request (the role join finds none).
    return member;
  });
}

export async function memberOf(db: Knex, teamId: string, userId: string): Promise<MemberRow | undefined> {
  return db<MemberRow>('team_members').where({ team_id: teamId, user_id: userId }).first();
}

export async function renameTeam(db: Knex, teamId: string, name: string): Promise<TeamRow> {
  const [row] = await db<TeamRow>('teams')
    .where({ id: teamId })
    .update({ name: name.trim(), updated_at: new Date() })
    .returning('*');
  if (!row) throw notFound('Team');
  return row;
}
