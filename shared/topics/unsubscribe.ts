// What a List-Unsubscribe link does (RFC 8058; the MTA writes the link, mta/delivery/compose.ts): its token names
// one recipient of one email. Under a topic, the address opts out of that topic; mail with no topic (a broadcast),
// or whose topic has since been deleted, puts the address on the team's suppression list (origin `unsubscribe`):
// the person asked for no more of this mail, and nothing narrower is left to record it against.
import type { Knex } from 'knex';
import { readUnsubscribeToken } from '../emails/mail-tokens.ts';
import { addSuppression } from '../suppressions/suppressions.ts';
import { setSubscription } from './subscriptions.ts';
import { countUnsubscribe } from '../email-metrics/unsubscribes.ts';

export interface UnsubscribeTarget {
  teamId: string;
  emailId: string;
  address: string;
  /** The email's From, as the page names the sender. */
  from: string;
  /** The email's topic, when it had one and it still exists. */
  topic: { id: string; name: string } | null;
  /** The address's standing: opted out of the topic, or suppressed when there is no topic. */
  unsubscribed: boolean;
}

/** The recipient a token names, or null for a token that is not ours or whose recipient is gone. */
export async function unsubscribeTarget(db: Knex, secrets: Buffer, token: string): Promise<UnsubscribeTarget | null> {
  const recipientId = readUnsubscribeToken(secrets, token);
  if (!recipientId) return null;
  // One query: the recipient, its email, the email's topic and what the address chose or suffered already.
  const {
    rows: [row],
  } = await db.raw(
    `select r.team_id, r.email_id, r.address, e."from", t.id as topic_id, t.name as topic_name,
      case when t.id is null then exists (select 1 from suppressions s where s.team_id = r.team_id and s.email = lower(r.address))
        else coalesce((select ts.subscription from topic_subscriptions ts where ts.topic_id = t.id and ts.email = lower(r.address)), t.default_subscription) = 'opt_out'
      end as unsubscribed
    from email_recipients r join emails e on e.id = r.email_id and e.team_id = r.team_id
    left join topics t on t.id = e.topic_id and t.team_id = e.team_id
    where r.id = ?`,
    [recipientId],
  );
  if (!row) return null;
  return {
    teamId: row.team_id,
    emailId: row.email_id,
    address: row.address,
    from: row.from,
    topic: row.topic_id ? { id: row.topic_id, name: row.topic_name } : null,
    unsubscribed: row.unsubscribed,
  };
}

/**
 * Unsubscribes the target (idempotent): opts out of its topic, or suppresses the address. A target still subscribed
 * counts as `unsubscribed` in the email's metrics.
 */
export async function unsubscribe(db: Knex, target: UnsubscribeTarget): Promise<void> {
  if (!target.unsubscribed) await countUnsubscribe(db, target.teamId, target.emailId, new Date());
  if (target.topic) {
    const recorded = await setSubscription(db, {
      teamId: target.teamId,
      topicId: target.topic.id,
      email: target.address,
      subscription: 'opt_out',
      sourceEmailId: target.emailId,
    });
    if (recorded) return;
    // The topic was deleted since the page was read: as for mail without a topic.
  }
  await addSuppression(db, target.teamId, { email: target.address, origin: 'unsubscribe', source_id: target.emailId });
}

export interface TopicChoice {
  id: string;
  name: string;
  description: string | null;
  subscribed: boolean;
}

/**
 * The preference page's list for the target's address: the team's `public` topics and the email's own topic
 * (whatever its visibility), each with whether the address is subscribed. By name.
 */
export async function topicChoices(db: Knex, target: UnsubscribeTarget): Promise<TopicChoice[]> {
  const { rows } = await db.raw(
    `select t.id, t.name, t.description, coalesce(ts.subscription, t.default_subscription) = 'opt_in' as subscribed
    from topics t left join topic_subscriptions ts on ts.topic_id = t.id and ts.email = lower(?)
    where t.team_id = ? and (t.visibility = 'public' or t.id = ?) order by t.name, t.id`,
    [target.address, target.teamId, target.topic?.id ?? null],
  );
  return rows;
}

/**
 * Saves the preference page: every topic it lists (topicChoices) becomes `opt_in` when `subscribed` names it and
 * `opt_out` otherwise; ids it does not list are ignored. One transaction; answers the list as saved.
 */
export async function saveTopicChoices(
  db: Knex,
  target: UnsubscribeTarget,
  subscribed: Set<string>,
): Promise<TopicChoice[]> {
  return db.transaction(async (trx) => {
    const listed = await topicChoices(trx, target);
    for (const topic of listed) {
      await setSubscription(trx, {
        teamId: target.teamId,
        topicId: topic.id,
        email: target.address,
        subscription: subscribed.has(topic.id) ? 'opt_in' : 'opt_out',
        sourceEmailId: target.emailId,
      });
    }
    return listed.map((topic) => ({ ...topic, subscribed: subscribed.has(topic.id) }));
  });
}
