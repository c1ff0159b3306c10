// Verified sender identities of a team: addresses of its members that the managed domain and the sandbox
// may send to. Until the dashboard's accounts exist, the operator CLI registers them.
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

export async function isVerifiedIdentity(db: Knex, teamId: string, email: string): Promise<boolean> {
  return Boolean(await db('team_identities').where({ team_id: teamId, email: email.toLowerCase() }).first('email'));
}
