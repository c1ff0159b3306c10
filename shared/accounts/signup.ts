// Sign-up and e-mail verification. A sign-up makes no account: it stores a pending sign-up (a `signup` token with
// the name and the password's hash) and mails its link; the account is made when the link is used, so it is the
// address's owner who makes it. A sign-up for an address that already has an account answers the same, does the
// same work (the password hashed, a token row written) and mails the owner a notice instead of a link: no answer,
// and no later login attempt, tells whether an address has an account.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { newId } from '../ids.ts';
import { normalizeEmail } from './addresses.ts';
import { checkPasswordLength, hashPassword } from './passwords.ts';
import { hashSecret, newSecret } from './one-time.ts';
import { findUserByEmail, type UserRow } from './users.ts';

export const SIGNUP_TOKEN_HOURS = 24;
export const RESET_TOKEN_MINUTES = 60;

export interface SignupInput {
  email: string;
  password: string;
  name?: string | null;
}

/** What the caller mails: a verification link (`token`) for a new address, a notice for a known one. */
export type SignupOutcome = { email: string; token: string; existing: UserRow | undefined };

/**
 * Work that commits with an account change or not at all (its mail, shared/accounts/mail.ts), run in the change's
 * transaction with what the change made.
 */
export type InCommit<T> = (trx: Knex, outcome: T) => Promise<void>;

export async function signUp(
  db: Knex,
  input: SignupInput,
  now = new Date(),
  inCommit?: InCommit<SignupOutcome>,
): Promise<SignupOutcome> {
  const email = normalizeEmail(input.email);
  const password = checkPasswordLength(input.password);
  const passwordHash = await hashPassword(password);
  const { token, hash } = newSecret();
  return db.transaction(async (trx) => {
    const existing = await findUserByEmail(trx, email);
    await insertSignup(trx, email, input, passwordHash, hash, now);
    const outcome = { email, token, existing };
    await inCommit?.(trx, outcome);
    return outcome;
  });
}

async function insertSignup(
  db: Knex,
  email: string,
  input: SignupInput,
  passwordHash: string,
  hash: string,
  now: Date,
) {
  await db('account_tokens').insert({
    id: newId(),
    kind: 'signup',
    email,
    data: { name: input.name?.trim() || null, password_hash: passwordHash },
    token_hash: hash,
    expires_at: new Date(now.getTime() + SIGNUP_TOKEN_HOURS * 3600_000),
  });
}

export function invalidToken(what = 'link'): ServiceError {
  return new ServiceError('validation_error', `Invalid \`token\`: this ${what} is invalid, used or expired.`, {
    errors: [{ path: 'token', message: 'invalid, used or expired' }],
  });
}

/** Uses a mailed token of `kind` once: the row, or null when it is unknown, used or expired. */
export async function useToken(db: Knex, kind: string, token: string, now = new Date()) {
  const [row] = await db('account_tokens')
    .where({ kind, token_hash: hashSecret(token) })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning('*');
  return row as
    | { id: string; email: string; user_id: string | null; data: { name: string | null; password_hash: string } | null }
    | undefined;
}

/** Uses a sign-up's token: the account, made now with its address verified. */
export async function verifyEmail(db: Knex, token: string, now = new Date()): Promise<UserRow> {
  return db.transaction(async (trx) => {
    const row = await useToken(trx, 'signup', token, now);
    if (!row?.data) throw invalidToken();
    const [user] = await trx<UserRow>('users')
      .insert({
        id: newId(),
        email: row.email,
        name: row.data.name,
        password_hash: row.data.password_hash,
        email_verified_at: now,
      })
      .onConflict('email')
      .ignore()
      .returning('*');
    // The address has an account already (another sign-up's link was used first): only its owner holds this link.
    if (!user)
      throw new ServiceError('validation_error', 'This address already has an account: sign in instead.', {
        errors: [{ path: 'token', message: 'the address already has an account' }],
      });
    return user;
  });
}
