// Verified sender identities of a team: addresses the managed domain and the sandbox may send to. They are the
// verified addresses of the team's members (an account's address is verified when it is made), and the addresses an
// operator registers with the CLI (`team verify-identity`, the team_identities table).
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { getTeam } from './teams.ts';

const ADDRESS = /^[^\s@<>()[\],;:"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z0-9-]{2,63}$/;

export async function verifyIdentity(
  db: Knex,
  teamId: string,
  email: string,
): Promise<{ team_id: string; email: string; verified_at: string }> {
  const address = email.trim().toLowerCase();
  if (address.length < 3 || address.length > 320 || !ADDRESS.test(address)) {
    throw new ServiceError('validation_error', `\`${email}\` is not an email address.`);
  }
  await getTeam(db, teamId);
  const [row] = await db('team_identities')
    .insert({ team_id: teamId, email: address })
    .onConflict(['team_id', 'email'])
    .merge({ verified_at: db.fn.now() })
    .returning('*');
  return { team_id: row.team_id, email: row.email, verified_at: new Date(row.verified_at).toISOString() };
}

/** Every identity of the team: the operator's registrations and the members' verified addresses, lower case. */
export async function identitiesOf(db: Knex, teamId: string): Promise<string[]> {
  const { rows } = await db.raw(
    `select lower(email) as email from team_identities where team_id = :team
     union select lower(u.email) from team_members m join users u on u.id = m.user_id
     where m.team_id = :team and u.email_verified_at is not null`,
    { team: teamId },
  );
  return (rows as { email: string }[]).map((r) => r.email);
}

export async function isVerifiedIdentity(db: Knex, teamId: string, email: string): Promise<boolean> {
  return (await identitiesOf(db, teamId)).includes(email.toLowerCase());
}
