// Invitations: an admin invites an address with a role; the mail carries a token (stored as its SHA-256) that the
// invited person uses once, signed in with that very address, within 7 days. A new invitation of the same address
// replaces the pending one; an admin may revoke one.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { notFound, ServiceError } from '../errors.ts';
import { isoRequired } from '../time.ts';
import { normalizeEmail } from '../accounts/addresses.ts';
import { hashSecret, newSecret } from '../accounts/one-time.ts';
import type { UserRow } from '../accounts/users.ts';
import type { InCommit } from '../accounts/signup.ts';
import type { Role } from './members.ts';

export const INVITATION_DAYS = 7;

export interface InvitationRow {
  id: string;
  team_id: string;
  email: string;
  role: Role;
  invited_by: string | null;
  token_hash: string;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
  revoked_at: Date | null;
  created_at: Date;
  /** The inviter's address (joined). */
  inviter_email?: string | null;
}

export function presentInvitation(i: InvitationRow) {
  return {
    object: 'team_invitation' as const,
    id: i.id,
    email: i.email,
    role: i.role,
    invited_by: i.inviter_email ?? null,
    expires_at: isoRequired(i.expires_at),
    created_at: isoRequired(i.created_at),
  };
}

const pending = (db: Knex, now: Date) =>
  db('team_invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .whereNull('i.accepted_at')
    .whereNull('i.revoked_at')
    .where('i.expires_at', '>', now)
    .select('i.*', 'u.email as inviter_email');

export async function createInvitation(
  db: Knex,
  teamId: string,
  inviterId: string,
  input: { email: string; role: Role },
  now = new Date(),
  inCommit?: InCommit<{ invitation: InvitationRow; token: string }>,
): Promise<{ invitation: InvitationRow; token: string }> {
  const email = normalizeEmail(input.email);
  const member = await db('team_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.team_id': teamId, 'u.email': email })
    .first('m.id');
  if (member)
    throw new ServiceError('validation_error', `Invalid \`email\`: ${email} is already a member of this team.`, {
      errors: [{ path: 'email', message: 'already a member' }],
    });
  const { token, hash } = newSecret('pwi_');
  return db.transaction(async (trx) => {
    await trx('team_invitations')
      .where({ team_id: teamId, email })
      .whereNull('accepted_at')
      .whereNull('revoked_at')
      .update({ revoked_at: now });
    await trx('team_invitations').insert({
      id: newId(),
      team_id: teamId,
      email,
      role: input.role,
      invited_by: inviterId,
      token_hash: hash,
      expires_at: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
      created_at: now,
    });
    const invitation = (await pending(trx, now).where({ 'i.token_hash': hash }).first()) as InvitationRow;
    await inCommit?.(trx, { invitation, token });
    return { invitation, token };
  });
}

export function listInvitations(db: Knex, teamId: string, now = new Date()): Promise<InvitationRow[]> {
  return pending(db, now).where({ 'i.team_id': teamId }).orderBy('i.id', 'desc').limit(100);
}

export async function revokeInvitation(db: Knex, teamId: string, id: string, now = new Date()): Promise<void> {
  const n = await db('team_invitations')
    .where({ id, team_id: teamId })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .update({ revoked_at: now });
  if (!n) throw notFound('Team invitation');
}

const badInvitation = () =>
  new ServiceError('validation_error', 'Invalid `token`: this invitation is unknown, used, revoked or expired.', {
    errors: [{ path: 'token', message: 'unknown, used, revoked or expired' }],
  });

/**
 * The signed-in `user` accepts the invitation of `token`: a member with its role. Only the invited address may
 * (another account is refused and the invitation stays as it was); the invitation works once.
 */
export async function acceptInvitation(db: Knex, user: UserRow, token: string, now = new Date()) {
  return db.transaction(async (trx) => {
    const found = (await pending(trx, now)
      .where({ 'i.token_hash': hashSecret(token) })
      .forUpdate('i')
      .first()) as InvitationRow | undefined;
    if (!found) throw badInvitation();
    if (found.email !== user.email)
      throw new ServiceError(
        'invalid_permission',
        'This invitation was sent to another address: sign in with the invited address to accept it.',
        { status: 403 },
      );
    const memberId = newId();
    const [member] = await trx('team_members')
      .insert({ id: memberId, team_id: found.team_id, user_id: user.id, role: found.role, created_at: now })
      .onConflict(['team_id', 'user_id'])
      .ignore()
      .returning('id');
    if (!member)
      throw new ServiceError('validation_error', 'You are already a member of this team.', {
        errors: [{ path: 'token', message: 'already a member' }],
      });
    await trx('team_invitations').where({ id: found.id }).update({ accepted_at: now, accepted_by: user.id });
    return { teamId: found.team_id, memberId };
  });
}
