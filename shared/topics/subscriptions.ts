// Who is subscribed to a topic: an address's own choice (topic_subscriptions), else the topic's
// default_subscription. A send under a topic goes only to subscribed recipients; the unsubscribe page records
// `opt_out` for the address its link names. Addresses are matched lower case, as suppressions are.
import type { Knex } from 'knex';
import { canonicalAddress } from '../suppressions/suppressions.ts';
import type { TopicRow, TopicSubscription } from './topics.ts';
import { isUuid } from '../ids.ts';

export interface TopicAudience {
  topic: TopicRow;
  /** Is this address (any case) subscribed to the topic? */
  subscribed(address: string): boolean;
}

/** The team's topic and what `addresses` chose for it, in one query; null when the team has no such topic. */
export async function topicAudience(
  db: Knex,
  teamId: string,
  topicId: string,
  addresses: string[],
): Promise<TopicAudience | null> {
  if (!isUuid(topicId)) return null;
  const {
    rows: [row],
  } = await db.raw(
    `select t.*, (select coalesce(json_object_agg(s.email, s.subscription), '{}'::json)
    from topic_subscriptions s where s.topic_id = t.id and s.email = any(?::text[])) as choices
    from topics t where t.team_id = ? and t.id = ?`,
    [[...new Set(addresses.map(canonicalAddress))], teamId, topicId],
  );
  if (!row) return null;
  const { choices, ...topic } = row as TopicRow & { choices: Record<string, TopicSubscription> };
  const chosen = new Map(Object.entries(choices));
  return {
    topic,
    subscribed: (address) => (chosen.get(canonicalAddress(address)) ?? topic.default_subscription) === 'opt_in',
  };
}

/** Why a recipient of a send under `topic` is not sent to: the recipient's last_response. */
export const notSubscribed = (topic: { name: string }) => `not subscribed to the topic ${topic.name}`;

/**
 * email.suppressed's `suppressed` for a recipient not subscribed to the send's topic (at the accept or at delivery).
 */
export function topicSuppressed(address: string, topic: { id: string; name: string }) {
  return {
    type: 'Suppressed',
    reason: 'unsubscribed_from_topic',
    message: `${address} is not subscribed to the topic ${topic.name}.`,
    topic_id: topic.id,
  };
}

/** A recipient of a send whose topic was deleted before it was delivered: its opt-outs went with the topic. */
export const topicDeleted = "the send's topic was deleted";

/** email.suppressed's `suppressed` for a recipient of a send whose topic no longer exists. */
export function topicDeletedSuppressed(address: string, topicId: string) {
  return {
    type: 'Suppressed',
    reason: 'topic_deleted',
    message: `${address} was not sent to: the topic ${topicId} was deleted.`,
    topic_id: topicId,
  };
}

export interface SubscriptionChoice {
  teamId: string;
  topicId: string;
  email: string;
  subscription: TopicSubscription;
  /** The email whose unsubscribe link made the choice. */
  sourceEmailId?: string | null;
}

/** Records an address's choice for a topic (the latest one stands). False when the team has no such topic. */
export async function setSubscription(db: Knex, choice: SubscriptionChoice): Promise<boolean> {
  // The topic's own row decides, in the statement: a topic deleted meanwhile records nothing.
  const { rows } = await db.raw(
    `insert into topic_subscriptions (topic_id, team_id, email, subscription, source_email_id, updated_at)
    select t.id, t.team_id, ?, ?, ?, now() from topics t where t.id = ? and t.team_id = ?
    on conflict (topic_id, email) do update set subscription = excluded.subscription, source_email_id = excluded.source_email_id, updated_at = now()
    returning topic_id`,
    [canonicalAddress(choice.email), choice.subscription, choice.sourceEmailId ?? null, choice.topicId, choice.teamId],
  );
  return rows.length > 0;
}
