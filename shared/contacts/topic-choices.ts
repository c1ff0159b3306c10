// A contact's topic choices: the rows of topic_subscriptions for its address (the same rows the unsubscribe and
// preference pages write), read with the topic's default where the address never chose.
import type { Knex } from 'knex';
import { paginate, type ListQuery } from '../pagination.ts';
import { canonicalAddress } from '../suppressions/suppressions.ts';
import { setSubscription } from '../topics/subscriptions.ts';
import type { TopicSubscription } from '../topics/topics.ts';
import type { ContactRow } from './rows.ts';
import { lockTopics, type TopicChoiceRef } from './references.ts';

export interface ContactTopicRow {
  id: string;
  name: string;
  description: string | null;
  /** The address's own choice, else the topic's default_subscription (opt_out for a never_subscribed contact). */
  subscription: TopicSubscription;
}

/** A page of the team's topics, newest first, each with what the contact's address is subscribed to. */
export function listContactTopics(db: Knex, contact: ContactRow, page: ListQuery) {
  const query = db('topics as t')
    .leftJoin('topic_subscriptions as s', (j) =>
      j.on('s.topic_id', 't.id').andOn('s.email', db.raw('?', [canonicalAddress(contact.email)])),
    )
    .where('t.team_id', contact.team_id)
    .select(
      't.id',
      't.name',
      't.description',
      db.raw("coalesce(s.subscription, case when ? then 'opt_out' else t.default_subscription end) as subscription", [
        contact.never_subscribed === true,
      ]),
    );
  return paginate<ContactTopicRow>(query, page, 't.id');
}

/**
 * Records the address's choices in the caller's transaction (the last one named for a topic wins), after checking
 * every topic is the team's (else a 422 naming its field). Answers the choices recorded, one per topic, in the
 * order first named.
 */
export async function recordTopicChoices(
  trx: Knex,
  teamId: string,
  email: string,
  choices: TopicChoiceRef[],
): Promise<{ id: string; subscription: TopicSubscription }[]> {
  await lockTopics(trx, teamId, choices);
  const latest = new Map<string, TopicSubscription>();
  for (const c of choices) latest.set(c.id, c.subscription);
  for (const [topicId, subscription] of latest) await setSubscription(trx, { teamId, topicId, email, subscription });
  return [...latest].map(([id, subscription]) => ({ id, subscription }));
}

/** The contact's choices, all or none (recordTopicChoices in a transaction of its own). */
export function setContactTopics(db: Knex, contact: ContactRow, choices: TopicChoiceRef[]) {
  return db.transaction((trx) => recordTopicChoices(trx, contact.team_id, contact.email, choices));
}
