// Who is subscribed to a topic: an address's own choice (topic_subscriptions), else the topic's
// default_subscription; and over both, the contact's global `unsubscribed`, which wins over every choice. A send under
// a topic goes only to subscribed recipients; the preference page records the address's choices and the contact's
// `unsubscribed`. Addresses are matched lower case, as suppressions and contacts (lower(email)) are.
import type { Knex } from 'knex';
import { canonicalAddress } from '../suppressions/suppressions.ts';
import type { TopicRow, TopicSubscription } from './topics.ts';
import { isUuid } from '../ids.ts';

/**
 * Where an address stands for a topic's sends: `subscribed`, `opted_out` (its own choice or the topic's default),
 * or `unsubscribed` (its contact is unsubscribed from everything, whatever it chose for the topic).
 */
export type Standing = 'subscribed' | 'opted_out' | 'unsubscribed';

export interface TopicAudience {
  topic: TopicRow;
  /** Where this address (any case) stands. */
  standing(address: string): Standing;
  /** Is this address (any case) sent to under the topic? */
  subscribed(address: string): boolean;
}

// The send path runs it for every topic send (at the accept and before each delivery), one query for all the
// recipients. Both lookups are index scans: topic_subscriptions' primary key (topic_id, email) and contacts' unique
// index (team_id, lower(email)).
const AUDIENCE_SQL = `select t.*, (select coalesce(json_object_agg(s.email, s.subscription), '{}'::json)
    from topic_subscriptions s where s.topic_id = t.id and s.email = any(?::text[])) as choices,
  (select coalesce(json_agg(lower(c.email)), '[]'::json) from contacts c
    where c.team_id = t.team_id and lower(c.email) = any(?::text[]) and c.unsubscribed) as unsubscribed,
  (select coalesce(json_agg(lower(c.email)), '[]'::json) from contacts c
    where c.team_id = t.team_id and lower(c.email) = any(?::text[]) and c.never_subscribed) as never
  from topics t where t.team_id = ? and t.id = ?`;

/**
 * The team's topic, what `addresses` chose for it and which of them are contacts unsubscribed from everything, in one
 * query; null when the team has no such topic.
 */
export async function topicAudience(
  db: Knex,
  teamId: string,
  topicId: string,
  addresses: string[],
): Promise<TopicAudience | null> {
  if (!isUuid(topicId)) return null;
  const canonical = [...new Set(addresses.map(canonicalAddress))];
  const {
    rows: [row],
  } = await db.raw(AUDIENCE_SQL, [canonical, canonical, canonical, teamId, topicId]);
  if (!row) return null;
  const { choices, unsubscribed, never, ...topic } = row as TopicRow & {
    choices: Record<string, TopicSubscription>;
    unsubscribed: string[];
    never: string[];
  };
  const neverSubscribed = new Set(never);
  const chosen = new Map(Object.entries(choices));
  const everything = new Set(unsubscribed);
  const standing = (address: string): Standing => {
    const key = canonicalAddress(address);
    if (everything.has(key)) return 'unsubscribed';
    // A contact that never subscribed is reached only by a choice of its own, never by a topic's default.
    const fallback = neverSubscribed.has(key) ? 'opt_out' : topic.default_subscription;
    return (chosen.get(key) ?? fallback) === 'opt_in' ? 'subscribed' : 'opted_out';
  };
  return { topic, standing, subscribed: (address) => standing(address) === 'subscribed' };
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

/** Why a recipient of a send under a topic is not sent to when its contact is unsubscribed from everything. */
export const contactUnsubscribed = 'the contact is unsubscribed from everything (its `unsubscribed`)';

/** email.suppressed's `suppressed` for a recipient whose contact is unsubscribed from everything. */
export function contactUnsubscribedSuppressed(address: string, topic: { id: string; name: string }) {
  return {
    type: 'Suppressed',
    reason: 'contact_unsubscribed',
    message: `${address} is unsubscribed from everything this team sends under a topic (the contact's \`unsubscribed\`).`,
    topic_id: topic.id,
  };
}

/** The recipient's last_response and email.suppressed `suppressed` for a standing other than `subscribed`. */
export function notSentUnder(topic: { id: string; name: string }, address: string, standing: Standing) {
  return standing === 'unsubscribed'
    ? { response: contactUnsubscribed, suppressed: contactUnsubscribedSuppressed(address, topic) }
    : { response: notSubscribed(topic), suppressed: topicSuppressed(address, topic) };
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
