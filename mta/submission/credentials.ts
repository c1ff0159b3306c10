// Who is submitting: the API key given at AUTH, looked up again at every MAIL FROM. A session may stay open for
// hours; a key revoked or a team suspended meanwhile must stop it at the next message, as the api stops the next
// request, and that message's quotas and rate limit must read the team row as it is now, not as it was at AUTH.
import type { Knex } from 'knex';
import { authenticate, type ApiKeyRow } from '../../shared/api-keys/keys.ts';
import type { TeamRow } from '../../shared/teams/teams.ts';
import { prepared } from '../../shared/db/prepared.ts';
import { reviveDates } from '../../shared/emails/sql.ts';
import { SmtpReply } from '../../shared/smtp/reply.ts';

/** What `session.user` holds: the key and its team, as of the last AUTH or MAIL FROM. */
export type Authed = { key: ApiKeyRow; team: TeamRow };

const USERNAMES = new Set(['apikey', 'resend']);

/** AUTH PLAIN/LOGIN (CONTRACT, Credentials): username `apikey`, password an API key that may send. */
export async function authenticateSubmission(db: Knex, username: string, password: string): Promise<Authed> {
  if (!USERNAMES.has(username.toLowerCase()))
    throw new SmtpReply(535, '5.7.8 Use the username `apikey` and an API key as the password');
  const result = await authenticate(db, password);
  if (!result.ok)
    throw new SmtpReply(
      535,
      result.error === 'suspended_api_key'
        ? '5.7.8 This API key belongs to a suspended team'
        : '5.7.8 Authentication credentials invalid',
    );
  if (result.key.permission === 'store_access') throw new SmtpReply(535, '5.7.8 This API key cannot send email');
  return { key: result.key, team: result.team };
}

// A named prepared statement (shared/db/prepared.ts): it runs once per message, like the api's key lookup.
const CURRENT_SQL =
  'select row_to_json(k.*) as key, row_to_json(t.*) as team from api_keys k join teams t on t.id = k.team_id where k.id = ?::uuid';
const KEY_DATES = ['created_at', 'last_used_at', 'revoked_at'] as const;
const TEAM_DATES = ['suspended_at', 'created_at', 'updated_at'] as const;

/**
 * The session's key and team as they are now. Refused with 550 5.7.8 (RFC 3463: authentication credentials
 * invalid; 550 because RFC 5321 §4.3.2 gives MAIL no 535): the client must authenticate again with a live key.
 */
export async function currentSender(db: Knex, keyId: string): Promise<Authed> {
  const [row] = await prepared<{ key: ApiKeyRow; team: TeamRow }>(db, 'pw_submission_sender', CURRENT_SQL, [keyId]);
  if (!row || row.key.status !== 'active')
    throw new SmtpReply(550, '5.7.8 This API key has been revoked; authenticate again with an active key');
  if (row.team.status === 'suspended') throw new SmtpReply(550, '5.7.8 This API key belongs to a suspended team');
  return { key: reviveDates(row.key, KEY_DATES), team: reviveDates(row.team, TEAM_DATES) };
}
