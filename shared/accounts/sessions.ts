// Dashboard sessions: an opaque token (`pws_` + 32 random bytes) in an httpOnly cookie, stored as its SHA-256.
// A session ends SESSION_IDLE_MINUTES after its last request (last_seen_at, written at most once a minute) and
// SESSION_MAX_DAYS after sign-in, or when revoked (logout, a password reset, the user revoking it). Its token is
// replaced (rotated) at every change of privilege: the old token stops working at once.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { prepared } from '../db/prepared.ts';
import { reviveDates } from '../emails/sql.ts';
import { newId } from '../ids.ts';
import { notFound } from '../errors.ts';
import { iso, isoRequired } from '../time.ts';
import type { TeamRow } from '../teams/teams.ts';
import { hashSecret, newSecret } from './one-time.ts';
import { USER_DATES, type UserRow } from './users.ts';

export const SESSION_PREFIX = 'pws_';
/** last_seen_at is written when older than this: idle expiry is exact to a minute, reads stay reads. */
const TOUCH_MS = 60_000;

export type Role = 'admin' | 'member' | 'viewer';
export const roles = ['admin', 'member', 'viewer'] as const;
/** Viewers read, members work, admins manage members, keys, billing and deletion. */
export const roleRank: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  current_team_id: string | null;
  user_agent: string | null;
  ip: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** A live session with its user, its current team and the user's role there (null: no current team). */
export interface ActiveSession {
  session: SessionRow;
  user: UserRow;
  team: TeamRow | null;
  role: Role | null;
}

export type SessionConfig = Pick<Config, 'SESSION_IDLE_MINUTES' | 'SESSION_MAX_DAYS'>;

/** The team a new session starts in: the last one switched to while still a member, else the oldest membership. */
async function startingTeam(db: Knex, user: Pick<UserRow, 'id' | 'last_team_id'>): Promise<string | null> {
  const row = await db('team_members')
    .where({ user_id: user.id })
    .orderByRaw('team_id = ? desc, created_at', [user.last_team_id])
    .first('team_id');
  return row?.team_id ?? null;
}

export async function createSession(
  db: Knex,
  user: Pick<UserRow, 'id' | 'last_team_id'>,
  config: SessionConfig,
  client: { ip?: string | null; userAgent?: string | null },
  now = new Date(),
): Promise<{ token: string; session: SessionRow }> {
  const { token, hash } = newSecret(SESSION_PREFIX);
  const [session] = await db<SessionRow>('sessions')
    .insert({
      id: newId(),
      user_id: user.id,
      token_hash: hash,
      current_team_id: await startingTeam(db, user),
      user_agent: client.userAgent?.slice(0, 512) ?? null,
      ip: client.ip ?? null,
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + config.SESSION_MAX_DAYS * 86_400_000),
    })
    .returning('*');
  return { token, session };
}

const FIND_SQL = `select row_to_json(s.*) as session, row_to_json(u.*) as user, row_to_json(t.*) as team, m.role
  from sessions s join users u on u.id = s.user_id
  left join team_members m on m.team_id = s.current_team_id and m.user_id = s.user_id
  left join teams t on t.id = m.team_id
  where s.token_hash = ? limit 1`;
const SESSION_DATES = ['created_at', 'last_seen_at', 'expires_at', 'revoked_at'] as const;
const TEAM_DATES = [
  'suspended_at',
  'created_at',
  'updated_at',
  'deletion_requested_at',
  'deletion_purge_after',
] as const;

/** The live session of `token`, or null (unknown, revoked, idle too long, past its absolute expiry). */
export async function findSession(
  db: Knex,
  token: string,
  config: SessionConfig,
  now = new Date(),
): Promise<ActiveSession | null> {
  if (!token.startsWith(SESSION_PREFIX) || token.length > 100) return null;
  const [row] = await prepared<{ session: SessionRow; user: UserRow; team: TeamRow | null; role: Role | null }>(
    db,
    'pw_find_session',
    FIND_SQL,
    [hashSecret(token)],
  );
  if (!row) return null;
  const session = reviveDates(row.session, SESSION_DATES);
  if (session.revoked_at || session.expires_at <= now) return null;
  if (session.last_seen_at.getTime() + config.SESSION_IDLE_MINUTES * 60_000 <= now.getTime()) return null;
  if (now.getTime() - session.last_seen_at.getTime() > TOUCH_MS) {
    await db('sessions').where({ id: session.id }).update({ last_seen_at: now });
    session.last_seen_at = now;
  }
  return {
    session,
    user: reviveDates(row.user, USER_DATES),
    team: row.team && row.role ? reviveDates(row.team, TEAM_DATES) : null,
    role: row.team ? row.role : null,
  };
}

/** A new token for the session (the old one stops working), optionally with a new current team. */
export async function rotateSession(
  db: Knex,
  sessionId: string,
  change: { current_team_id?: string | null } = {},
): Promise<string> {
  const { token, hash } = newSecret(SESSION_PREFIX);
  const updated = await db('sessions')
    .where({ id: sessionId })
    .whereNull('revoked_at')
    .update({ token_hash: hash, ...change });
  if (!updated) throw notFound('Session');
  return token;
}

export async function revokeSession(db: Knex, userId: string, id: string, now = new Date()): Promise<void> {
  const n = await db('sessions').where({ id, user_id: userId }).whereNull('revoked_at').update({ revoked_at: now });
  if (!n) throw notFound('Session');
}

export function revokeAllSessions(db: Knex, userId: string, now = new Date()) {
  return db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: now });
}

/** The user's live sessions, newest first. */
export function listSessions(db: Knex, userId: string, config: SessionConfig, now = new Date()) {
  return db<SessionRow>('sessions')
    .where({ user_id: userId })
    .whereNull('revoked_at')
    .where('expires_at', '>', now)
    .where('last_seen_at', '>', new Date(now.getTime() - config.SESSION_IDLE_MINUTES * 60_000))
    .orderBy('id', 'desc')
    .limit(100);
}

export function presentSessionInfo(s: SessionRow, config: SessionConfig, currentId: string) {
  const idle = new Date(s.last_seen_at.getTime() + config.SESSION_IDLE_MINUTES * 60_000);
  return {
    object: 'user_session' as const,
    id: s.id,
    current: s.id === currentId,
    user_agent: s.user_agent,
    ip: s.ip,
    created_at: isoRequired(s.created_at),
    last_seen_at: isoRequired(s.last_seen_at),
    expires_at: iso(idle < s.expires_at ? idle : s.expires_at),
  };
}
