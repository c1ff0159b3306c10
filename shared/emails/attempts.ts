// A sent email's delivery attempts for the API: one row per try at one recipient domain (mta/delivery/record.ts
// writes them), with the SMTP transcript of the try (every command and reply, never the message itself). Lists
// are newest first with attempt ids as cursors, like every list.
import type { Knex } from 'knex';
import { notFound } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { isoRequired } from '../time.ts';
import { getEmail } from './store.ts';

export interface AttemptRow {
  id: string;
  email_id: string;
  team_id: string;
  domain: string;
  recipients: string[];
  mx_host: string | null;
  outcome: 'delivered' | 'deferred' | 'bounced' | 'partial';
  response: string | null;
  transcript: string | null;
  tls: boolean;
  duration_ms: number;
  started_at: Date;
}

/** The team's email's attempts, a page at a time; 404 when the team has no such email. */
export async function listAttempts(db: Knex, teamId: string, emailId: string, page: ListQuery) {
  await getEmail(db, teamId, emailId);
  return paginate<AttemptRow>(db('delivery_attempts').where({ email_id: emailId, team_id: teamId }), page);
}

export async function getAttempt(db: Knex, teamId: string, emailId: string, attemptId: string): Promise<AttemptRow> {
  await getEmail(db, teamId, emailId);
  const row = await db<AttemptRow>('delivery_attempts')
    .where({ id: attemptId, email_id: emailId, team_id: teamId })
    .first();
  if (!row) throw notFound('Delivery attempt');
  return row;
}

export function presentAttempt(a: AttemptRow) {
  return {
    object: 'delivery_attempt' as const,
    id: a.id,
    email_id: a.email_id,
    domain: a.domain,
    recipients: a.recipients,
    mx_host: a.mx_host,
    tls: a.tls,
    outcome: a.outcome,
    response: a.response,
    started_at: isoRequired(a.started_at),
    duration_ms: a.duration_ms,
    transcript: a.transcript,
  };
}
