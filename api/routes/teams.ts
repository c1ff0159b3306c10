// The teams area (session only): the signed-in user's teams, creating and renaming one, its members and roles.
// Viewers read, members work, admins manage members, keys, billing and deletion; a team keeps an admin.
import { z } from 'zod';
import { ServiceError } from '../../shared/errors.ts';
import * as members from '../../shared/teams/members.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';
import { listEnvelope } from '../../shared/pagination.ts';
import * as s from './auth-schemas.ts';
import { teamAccess } from './team-access.ts';

const base = { tag: 'teams', permission: 'session', scope: null } as const;
const teamParams = z.object({ team_id: pathId('team') });
const memberParams = z.object({ team_id: pathId('team'), member_id: pathId('team member') });
const teamName = z.string().min(1).max(200);

export const teamsOperations = [
  defineOperation({
    ...base,
    operationId: 'createTeam',
    method: 'post',
    path: '/teams',
    summary: 'Create a team',
    description:
      'A new team with its managed domain; you are its admin. With `api_key: true` the answer also carries a first `full_access` key, its token shown this once.',
    status: 201,
    body: z.object({
      name: teamName.describe("The team's name, 1-200 characters"),
      api_key: z.boolean().optional().describe('Also make a first full_access API key (its token is in the answer)'),
    }),
    response: s.dashboardTeam.extend({
      api_key: z.object({ id: z.uuid(), token: z.string() }).nullable().describe('The first key, when asked for'),
    }),
    handler: async ({ session, body, deps }) => {
      if (!body.name.trim()) throw new ServiceError('validation_error', 'Invalid `name`: must not be blank.');
      const { team, key } = await members.createTeamForUser(
        deps.db,
        session.user.id,
        body,
        deps.config.MANAGED_DOMAIN_HOST,
      );
      return {
        ...members.presentDashboardTeam(team),
        api_key: key ? { id: key.row.id, token: key.token } : null,
      };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listTeams',
    method: 'get',
    path: '/teams',
    summary: 'List your teams',
    description: 'The teams the signed-in user belongs to, oldest membership first.',
    response: listEnvelope(s.dashboardTeam),
    handler: async ({ session, deps }) => ({
      object: 'list' as const,
      has_more: false,
      data: (await members.teamsOf(deps.db, session.user.id)).map(members.presentDashboardTeam),
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'updateTeam',
    method: 'patch',
    path: '/teams/{team_id}',
    summary: 'Rename a team',
    description: 'Changes the name of a team you are an admin of.',
    params: teamParams,
    body: z.object({ name: teamName.describe('The new name, 1-200 characters') }),
    response: s.dashboardTeam,
    handler: async ({ session, params, body, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      if (!body.name.trim()) throw new ServiceError('validation_error', 'Invalid `name`: must not be blank.');
      return members.presentDashboardTeam(await members.renameTeam(deps.db, params.team_id, body.name));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listTeamMembers',
    method: 'get',
    path: '/teams/{team_id}/members',
    summary: 'List the members',
    description: 'The members of a team you belong to, with their roles and whether their MFA is on.',
    params: teamParams,
    response: listEnvelope(s.teamMember),
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'viewer');
      const rows = await members.listMembers(deps.db, params.team_id);
      return { object: 'list' as const, has_more: false, data: rows.map(members.presentMember) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'setTeamMemberRole',
    method: 'patch',
    path: '/teams/{team_id}/members/{member_id}',
    summary: "Change a member's role",
    description: "An admin sets a member's role; the last admin cannot lose it.",
    params: memberParams,
    body: z.object({ role: s.role.describe('`admin`, `member` or `viewer`') }),
    response: s.teamMember,
    handler: async ({ session, params, body, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      return members.presentMember(await members.setRole(deps.db, params.team_id, params.member_id, body.role));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'removeTeamMember',
    method: 'delete',
    path: '/teams/{team_id}/members/{member_id}',
    summary: 'Remove a member',
    description:
      'An admin removes a member (or anyone removes themselves: leaving). The last admin cannot be removed. Their sessions lose the team at once.',
    params: memberParams,
    response: z.object({ object: z.literal('team_member'), id: z.uuid(), deleted: z.literal(true) }),
    handler: async ({ session, params, deps }) => {
      const target = await members.getMember(deps.db, params.team_id, params.member_id).catch(() => null);
      const self = target?.user_id === session.user.id;
      await teamAccess(deps.db, session.user.id, params.team_id, self ? 'viewer' : 'admin');
      await members.removeMember(deps.db, params.team_id, params.member_id);
      return { object: 'team_member' as const, id: params.member_id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'leaveTeam',
    method: 'post',
    path: '/teams/{team_id}/leave',
    summary: 'Leave a team',
    description: 'Removes you from the team; the last admin cannot leave (make someone else admin first).',
    params: teamParams,
    body: z.object({}),
    response: z.object({ object: z.literal('team_member'), id: z.uuid(), deleted: z.literal(true) }),
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'viewer');
      const me = await members.memberOf(deps.db, params.team_id, session.user.id);
      const gone = await members.removeMember(deps.db, params.team_id, me!.id);
      return { object: 'team_member' as const, id: gone.id, deleted: true as const };
    },
  }),
];
