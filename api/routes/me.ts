// The signed-in user (Me), their sessions, and switching their session's current team.
import { z } from 'zod';
import { listSessions, presentSessionInfo, revokeSession, rotateSession } from '../../shared/accounts/sessions.ts';
import type { ActiveSession } from '../../shared/accounts/sessions.ts';
import { membership, presentDashboardTeam, teamsOf } from '../../shared/teams/members.ts';
import { iso } from '../../shared/time.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { setSessionCookies } from '../middleware/session.ts';
import { pathId, timestamp } from './schemas.ts';
import * as s from './auth-schemas.ts';
import { listEnvelope } from '../../shared/pagination.ts';

const base = { permission: 'session', scope: null } as const;

export async function presentMe(deps: ApiDeps, user: ActiveSession['user'], currentTeamId: string | null) {
  const teams = await teamsOf(deps.db, user.id);
  const current = teams.some((t) => t.id === currentTeamId) ? currentTeamId : null;
  const member = current
    ? await deps.db('team_members').where({ team_id: current, user_id: user.id }).first('role')
    : undefined;
  return {
    object: 'user' as const,
    id: user.id,
    email: user.email,
    name: user.name,
    email_verified_at: iso(user.email_verified_at),
    current_team_id: current,
    current_team_role: (member?.role ?? null) as 'viewer' | 'member' | 'admin' | null,
    teams: teams.map(presentDashboardTeam),
  };
}

const userSession = z
  .object({
    object: z.literal('user_session'),
    id: z.uuid(),
    current: z.boolean().describe('The session of this request'),
    user_agent: z.string().nullable(),
    ip: z.string().nullable(),
    created_at: timestamp,
    last_seen_at: timestamp,
    expires_at: timestamp.nullable().describe('When it ends unless used again (idle), or at the latest (absolute)'),
  })
  .meta({ id: 'UserSession' });

export const meOperations = [
  defineOperation({
    ...base,
    tag: 'auth',
    operationId: 'getMe',
    method: 'get',
    path: '/me',
    summary: 'Retrieve the signed-in user',
    description: "The signed-in user, the teams they belong to and their session's current team.",
    response: s.me,
    handler: async ({ session, deps }) => presentMe(deps, session.user, session.session.current_team_id),
  }),
  defineOperation({
    ...base,
    tag: 'auth',
    operationId: 'listSessions',
    method: 'get',
    path: '/auth/sessions',
    summary: 'List your sessions',
    description: 'The live sessions of the signed-in user (every browser signed in), newest first, at most 100.',
    response: listEnvelope(userSession),
    handler: async ({ session, deps }) => {
      const rows = await listSessions(deps.db, session.user.id, deps.config);
      return {
        object: 'list' as const,
        has_more: false,
        data: rows.map((r) => presentSessionInfo(r, deps.config, session.session.id)),
      };
    },
  }),
  defineOperation({
    ...base,
    tag: 'auth',
    operationId: 'revokeSession',
    method: 'delete',
    path: '/auth/sessions/{session_id}',
    summary: 'Revoke a session',
    description: 'Signs one of your sessions out (its cookie stops working at once); yours or another browser.',
    params: z.object({ session_id: pathId('session') }),
    response: z.object({ object: z.literal('user_session'), id: z.uuid(), deleted: z.literal(true) }),
    handler: async ({ session, params, deps }) => {
      await revokeSession(deps.db, session.user.id, params.session_id);
      return { object: 'user_session' as const, id: params.session_id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    tag: 'teams',
    operationId: 'switchTeam',
    method: 'post',
    path: '/teams/{team_id}/switch',
    summary: 'Switch the current team',
    description:
      "Makes the team this session's current team (the one API routes act on with the session) and the one new sessions start in. The session's token is replaced (a change of privilege).",
    params: z.object({ team_id: pathId('team') }),
    response: s.me,
    handler: async ({ session, params, deps, ctx }) => {
      await membership(deps.db, session.user.id, params.team_id);
      const token = await rotateSession(deps.db, session.session.id, { current_team_id: params.team_id });
      await deps.db('users').where({ id: session.user.id }).update({ last_team_id: params.team_id });
      setSessionCookies(ctx, deps, token, session.session.expires_at);
      return presentMe(deps, session.user, params.team_id);
    },
  }),
];
