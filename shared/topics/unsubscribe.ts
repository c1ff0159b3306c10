// What a List-Unsubscribe link and the preference page it opens do (RFC 8058; the MTA writes the link,
// mta/delivery/compose.ts): its token names one recipient of one email, so one address of one team. The page and a
// one-click POST write the same rows the contacts API reads: the address's topic_subscriptions and its contact's
// global `unsubscribed` (shared/contacts/unsubscribed.ts). A one-click under a topic opts the address out of that
// topic; mail with no topic (a broadcast), or whose topic has since been deleted, unsubscribes the address from
// everything: nothing narrower is left to record the request against.
import type { Knex } from 'knex';
import { readUnsubscribeToken } from '../emails/mail-tokens.ts';
import { setUnsubscribed } from '../contacts/unsubscribed.ts';
import { setSubscription } from './subscriptions.ts';
import type { TopicVisibility } from './topics.ts';
import { countUnsubscribe } from '../email-metrics/unsubscribes.ts';

export interface UnsubscribeTarget {
  teamId: string;
  /** The email_recipients row the link names. */
  recipientId: string;
  emailId: string;
  address: string;
  /** The email's From, as the page names the sender. */
  from: string;
  /** The email's topic, when it had one and it still exists. */
  topic: { id: string; name: string; visibility: TopicVisibility } | null;
  /** The address is opted out of the email's topic (its own choice, else the topic's default); false without one. */
  optedOut: boolean;
  /** The address's contact is unsubscribed from everything; false when the address is no contact of the team. */
  unsubscribedAll: boolean;
}

/** The recipient a token names, or null for a token that is not ours or whose recipient is gone. */
export async function unsubscribeTarget(db: Knex, secrets: Buffer, token: string): Promise<UnsubscribeTarget | null> {
  const recipientId = readUnsubscribeToken(secrets, token);
  if (!recipientId) return null;
  // One query: the recipient, its email, the email's topic, the address's choice for it and its contact's standing.
  const {
    rows: [row],
  } = await db.raw(
    `select r.team_id, r.email_id, r.address, e."from", t.id as topic_id, t.name as topic_name, t.visibility as topic_visibility,
      t.id is not null and coalesce((select ts.subscription from topic_subscriptions ts where ts.topic_id = t.id and ts.email = lower(r.address)), t.default_subscription) = 'opt_out' as opted_out,
      exists (select 1 from contacts c where c.team_id = r.team_id and lower(c.email) = lower(r.address) and c.unsubscribed) as unsubscribed_all
    from email_recipients r join emails e on e.id = r.email_id and e.team_id = r.team_id
    left join topics t on t.id = e.topic_id and t.team_id = e.team_id
    where r.id = ?`,
    [recipientId],
  );
  if (!row) return null;
  return {
    teamId: row.team_id,
    recipientId,
    emailId: row.email_id,
    address: row.address,
    from: row.from,
    topic: row.topic_id ? { id: row.topic_id, name: row.topic_name, visibility: row.topic_visibility } : null,
    optedOut: row.opted_out,
    unsubscribedAll: row.unsubscribed_all,
  };
}

/**
 * The recipient unsubscribed through this copy's link: counted in the email's metrics, and recorded on its
 * recipient row (the first time), which is what a broadcast's `unsubscribed` report lists.
 */
async function recordUnsubscribe(db: Knex, target: UnsubscribeTarget): Promise<void> {
  const now = new Date();
  await countUnsubscribe(db, target.teamId, target.emailId, now);
  await db('email_recipients')
    .where({ id: target.recipientId, team_id: target.teamId })
    .whereNull('unsubscribed_at')
    .update({ unsubscribed_at: now });
}

/**
 * The one-click unsubscribe (idempotent): opts the address out of the email's topic, or, for mail without one (or
 * whose topic was deleted meanwhile), unsubscribes its contact from everything. Answers what it did.
 */
export async function unsubscribe(db: Knex, target: UnsubscribeTarget): Promise<'topic' | 'everything'> {
  // A recipient still subscribed to what the link ends counts as `unsubscribed` in the email's metrics.
  if (target.topic ? !target.optedOut : !target.unsubscribedAll) await recordUnsubscribe(db, target);
  if (target.topic) {
    const recorded = await setSubscription(db, {
      teamId: target.teamId,
      topicId: target.topic.id,
      email: target.address,
      subscription: 'opt_out',
      sourceEmailId: target.emailId,
    });
    if (recorded) return 'topic';
  }
  await db.transaction((trx) => setUnsubscribed(trx, target.teamId, target.address, true));
  return 'everything';
}

/** Sets the contact's global `unsubscribed` for the target's address (making the contact to unsubscribe it). */
export async function setUnsubscribedAll(db: Knex, target: UnsubscribeTarget, unsubscribed: boolean): Promise<void> {
  // Unsubscribing from everything through the email's page counts as `unsubscribed` in its metrics, once.
  if (unsubscribed && !target.unsubscribedAll) await recordUnsubscribe(db, target);
  await db.transaction((trx) => setUnsubscribed(trx, target.teamId, target.address, unsubscribed));
}

export interface TopicChoice {
  id: string;
  name: string;
  description: string | null;
  /** The address's own choice, else the topic's default (as the contacts API shows it). */
  subscribed: boolean;
}

/**
 * The preference page's list for the target's address: the team's `public` topics, by name, each with the address's
 * choice. A private topic is never listed, not even the email's own (the page offers its one-click unsubscribe).
 */
export async function topicChoices(db: Knex, target: UnsubscribeTarget): Promise<TopicChoice[]> {
  const { rows } = await db.raw(
    `select t.id, t.name, t.description, coalesce(ts.subscription, case when exists (select 1 from contacts c
        where c.team_id = t.team_id and lower(c.email) = lower(?) and c.never_subscribed)
      then 'opt_out' else t.default_subscription end) = 'opt_in' as subscribed
    from topics t left join topic_subscriptions ts on ts.topic_id = t.id and ts.email = lower(?)
    where t.team_id = ? and t.visibility = 'public' order by t.name, t.id`,
    [target.address, target.address, target.teamId],
  );
  return rows;
}

/**
 * Saves the preference form: every topic it lists (topicChoices, read again in the transaction) becomes `opt_in`
 * when `subscribed` names it and `opt_out` otherwise (a row written only where that changes what stands); ids it
 * does not list are ignored. The contact's `unsubscribed`
 * is left as it is: subscribing again is a step of its own (setUnsubscribedAll).
 */
export async function saveTopicChoices(db: Knex, target: UnsubscribeTarget, subscribed: Set<string>): Promise<void> {
  await db.transaction(async (trx) => {
    for (const topic of await topicChoices(trx, target)) {
      // A choice already standing is left as it is (a default stays a default).
      if (topic.subscribed === subscribed.has(topic.id)) continue;
      await setSubscription(trx, {
        teamId: target.teamId,
        topicId: topic.id,
        email: target.address,
        subscription: subscribed.has(topic.id) ? 'opt_in' : 'opt_out',
        sourceEmailId: target.emailId,
      });
    }
  });
}
