// People who sign in. A user is made when a sign-up's link is used (signup.ts); the address is theirs, verified.
import type { Knex } from 'knex';
import { notFound } from '../errors.ts';
import { iso, isoRequired } from '../time.ts';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  email_verified_at: Date | null;
  mfa_secret_sealed: string | null;
  mfa_enabled_at: Date | null;
  mfa_pending_secret_sealed: string | null;
  mfa_last_step: string | number | null;
  last_team_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const USER_DATES = ['email_verified_at', 'mfa_enabled_at', 'created_at', 'updated_at'] as const;

export function findUserByEmail(db: Knex, email: string): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ email }).first();
}

export async function getUser(db: Knex, id: string): Promise<UserRow> {
  const row = await db<UserRow>('users').where({ id }).first();
  if (!row) throw notFound('User');
  return row;
}

/** The spec's User. */
export function presentUser(u: UserRow) {
  return {
    object: 'user' as const,
    id: u.id,
    email: u.email,
    name: u.name,
    email_verified_at: iso(u.email_verified_at),
    created_at: isoRequired(u.created_at),
  };
}
