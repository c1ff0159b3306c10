// The shapes of the auth and teams areas (spec: "Session, User, Team (dashboard)" and "Auth request and result
// shapes"), shared by their route files.
import { z } from 'zod';
import { timestamp } from './schemas.ts';

export const email = z.string().min(3).max(320);
export const password = z.string().min(8).max(4096);
export const token512 = z.string().min(1).max(512);
export const mfaCode = z.string().min(1).max(64);
export const role = z.enum(['admin', 'member', 'viewer']);

export const user = z
  .object({
    object: z.literal('user'),
    id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    email_verified_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'User' });

export const dashboardTeam = z
  .object({
    object: z.literal('team'),
    id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    risk_state: z.string().describe('`normal`, `suspended` (by the operator) or `deletion_scheduled`'),
    created_at: timestamp,
  })
  .meta({ id: 'DashboardTeam' });

export const session = z
  .object({ object: z.literal('session'), user, current_team: dashboardTeam.nullable() })
  .meta({ id: 'Session' });

export const mfaChallenge = z
  .object({ object: z.literal('mfa_challenge'), challenge_token: z.string(), expires_at: timestamp })
  .meta({ id: 'MfaChallenge' });

export const me = z
  .object({
    object: z.literal('user'),
    id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    email_verified_at: timestamp.nullable(),
    current_team_id: z.uuid().nullable(),
    current_team_role: z
      .enum(['admin', 'member', 'viewer'])
      .nullable()
      .describe("The user's role in the current team (null without one)"),
    teams: z.array(dashboardTeam),
  })
  .meta({ id: 'Me' });

export const teamMember = z
  .object({
    object: z.literal('team_member'),
    id: z.uuid(),
    user_id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    role,
    mfa_enabled: z.boolean(),
    sso_exempt: z.boolean(),
    created_at: timestamp,
  })
  .meta({ id: 'TeamMember' });

export const teamInvitation = z
  .object({
    object: z.literal('team_invitation'),
    id: z.uuid(),
    email: z.string(),
    role,
    invited_by: z.string().nullable().describe("The inviting admin's address, or null once that account is gone"),
    expires_at: timestamp,
    created_at: timestamp,
  })
  .meta({ id: 'TeamInvitation' });

export const teamDeletion = z
  .object({
    object: z.literal('team_deletion'),
    team_id: z.uuid(),
    status: z.enum(['none', 'scheduled', 'in_progress']),
    requested_at: timestamp.nullable(),
    purge_after: timestamp.nullable(),
    requested_by: z.uuid().nullable(),
  })
  .meta({ id: 'TeamDeletion' });

export const teamExport = z
  .object({
    object: z.literal('team_export'),
    id: z.uuid(),
    status: z.enum(['pending', 'running', 'completed', 'failed', 'expired']),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
    expires_at: timestamp.nullable(),
    bytes: z.number().int().nullable(),
    truncated: z.boolean(),
    download_url: z.string().nullable(),
  })
  .meta({ id: 'TeamExport' });
