// `unsubscribed` of GET /emails/metrics: a recipient who used the email's unsubscribe link (its one-click, or
// "unsubscribe from everything" on its preference page: shared/topics/unsubscribe.ts) and was still subscribed,
// counted for that email at that moment.
import type { Knex } from 'knex';
import { addCounts } from './counters.ts';

export async function countUnsubscribe(db: Knex, teamId: string, emailId: string, at: Date): Promise<void> {
  const email: { domain_id: string | null; broadcast_id: string | null } | undefined = await db('emails')
    .where({ id: emailId, team_id: teamId })
    .first('domain_id', 'broadcast_id');
  if (!email) return;
  await addCounts(db, [
    {
      team_id: teamId,
      at,
      domain_id: email.domain_id,
      broadcast_id: email.broadcast_id,
      email_id: emailId,
      counts: { unsubscribed: 1 },
    },
  ]);
}
