// Password reset: a request stores a `password_reset` token for any address (for one without an account the row
// names no user and is never mailed, so both answers cost the same), mails the link to an account's owner; using it
// sets the new password, ends every session of the account and revokes every OAuth grant it made.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { normalizeEmail } from './addresses.ts';
import { checkPasswordLength, hashPassword } from './passwords.ts';
import { newSecret } from './one-time.ts';
import { invalidToken, RESET_TOKEN_MINUTES, useToken, type InCommit } from './signup.ts';
import { findUserByEmail, type UserRow } from './users.ts';
import { revokeGrants } from '../oauth/grants.ts';

export interface ResetRequested {
  email: string;
  user: UserRow | undefined;
  token: string;
}

/** Stores a reset token; `inCommit` (the mail) commits with it. */
export async function requestReset(
  db: Knex,
  emailInput: string,
  now = new Date(),
  inCommit?: InCommit<ResetRequested>,
): Promise<ResetRequested> {
  const email = normalizeEmail(emailInput);
  const { token, hash } = newSecret();
  return db.transaction(async (trx) => {
    const user = await findUserByEmail(trx, email);
    await trx('account_tokens').insert({
      id: newId(),
      kind: 'password_reset',
      email,
      user_id: user?.id ?? null,
      token_hash: hash,
      expires_at: new Date(now.getTime() + RESET_TOKEN_MINUTES * 60_000),
    });
    const outcome = { email, user, token };
    await inCommit?.(trx, outcome);
    return outcome;
  });
}

/**
 * Checks the new password first (a refused password leaves the token usable), then uses the token once. Answers the
 * user and the OAuth grants it revoked (provider grant ids), for the caller to make every api copy forget them.
 */
export async function resetPassword(
  db: Knex,
  token: string,
  password: string,
  now = new Date(),
): Promise<{ user: UserRow; revokedGrants: string[] }> {
  const normalized = checkPasswordLength(password);
  const hash = await hashPassword(normalized);
  return db.transaction(async (trx) => {
    const row = await useToken(trx, 'password_reset', token, now);
    if (!row?.user_id) throw invalidToken();
    const [user] = await trx<UserRow>('users')
      .where({ id: row.user_id })
      .update({ password_hash: hash, updated_at: now })
      .returning('*');
    if (!user) throw invalidToken();
    // A reset is the owner taking the account back: every session (a thief's too) ends.
    await trx('sessions').where({ user_id: user.id }).whereNull('revoked_at').update({ revoked_at: now });
    // And any other reset link of the account is spent.
    await trx('account_tokens')
      .where({ kind: 'password_reset', user_id: user.id })
      .whereNull('used_at')
      .update({ used_at: now });
    // OAuth grants act for the person without their password, in every team: a thief's grant must end too.
    const revokedGrants: string[] = await trx('oauth_grants')
      .where({ user_id: user.id })
      .whereNull('revoked_at')
      .pluck('provider_grant_id');
    await revokeGrants(trx, revokedGrants, 'password_reset');
    return { user, revokedGrants };
  });
}
