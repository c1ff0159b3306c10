// Invitations (teams area, session only): an admin invites an address with a role, lists and revokes pending
// invitations; the invited person, signed in with that address, accepts with the mailed token.
import { z } from 'zod';
import * as invitations from '../../shared/teams/invitations.ts';
import { getMember, presentMember } from '../../shared/teams/members.ts';
import { invitationMail } from '../../shared/accounts/messages.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';
import { listEnvelope } from '../../shared/pagination.ts';
import * as s from './auth-schemas.ts';
import { teamAccess } from './team-access.ts';
import { mailer } from './auth-common.ts';

const base = { tag: 'teams', permission: 'session', scope: null } as const;
const teamParams = z.object({ team_id: pathId('team') });

export const invitationOperations = [
  defineOperation({
    ...base,
    operationId: 'createTeamInvitation',
    method: 'post',
    path: '/teams/{team_id}/invitations',
    summary: 'Invite someone',
    description:
      'An admin invites an address with a role; the invitation is mailed with a link whose token works once, for 7 days, for a person signed in with that address. Inviting the address again replaces its pending invitation.',
    status: 201,
    params: teamParams,
    body: z.object({
      email: s.email.describe('The address to invite, 3-320 characters'),
      role: s.role.describe('The role they get: `admin`, `member` or `viewer`'),
    }),
    response: s.teamInvitation,
    handler: async ({ session, params, body, deps }) => {
      const { team } = await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      const outbox = await mailer(deps).outbox();
      const { invitation } = await invitations.createInvitation(
        deps.db,
        team.id,
        session.user.id,
        body,
        new Date(),
        (trx, made) =>
          outbox.write(
            trx,
            invitationMail(deps.config.PUBLIC_BASE_URL, made.invitation.email, made.token, {
              team: team.name,
              inviter: session.user.name ?? session.user.email,
              role: made.invitation.role,
              days: invitations.INVITATION_DAYS,
            }),
          ),
      );
      await outbox.enqueue();
      return invitations.presentInvitation(invitation);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listTeamInvitations',
    method: 'get',
    path: '/teams/{team_id}/invitations',
    summary: 'List pending invitations',
    description: 'The pending invitations of a team you are an admin of, newest first (at most 100).',
    params: teamParams,
    response: listEnvelope(s.teamInvitation),
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      const rows = await invitations.listInvitations(deps.db, params.team_id);
      return { object: 'list' as const, has_more: false, data: rows.map(invitations.presentInvitation) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'revokeTeamInvitation',
    method: 'delete',
    path: '/teams/{team_id}/invitations/{invitation_id}',
    summary: 'Revoke an invitation',
    description: 'An admin revokes a pending invitation: its link stops working.',
    params: z.object({ team_id: pathId('team'), invitation_id: pathId('invitation') }),
    response: z.object({ object: z.literal('team_invitation'), id: z.uuid(), deleted: z.literal(true) }),
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      await invitations.revokeInvitation(deps.db, params.team_id, params.invitation_id);
      return { object: 'team_invitation' as const, id: params.invitation_id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'acceptTeamInvitation',
    method: 'post',
    path: '/team-invitations/accept',
    summary: 'Accept an invitation',
    description:
      'Joins the team of the invitation with its role. You must be signed in with the invited address; the token works once. Answers your membership.',
    body: z.object({ token: z.string().min(1).max(256).describe("The token of the invitation mail's link") }),
    response: s.teamMember,
    handler: async ({ session, body, deps }) => {
      const { teamId, memberId } = await invitations.acceptInvitation(deps.db, session.user, body.token);
      return presentMember(await getMember(deps.db, teamId, memberId));
    },
  }),
];
