// Topics: what a team's contacts subscribe to. Every function takes `db` first (knex or a transaction) and the
// team, and every query is scoped by it: another team's topic is as absent as one that never existed. Topics
// record no events (the spec's event types name none).
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';

export const subscriptions = ['opt_in', 'opt_out'] as const;
export type TopicSubscription = (typeof subscriptions)[number];

export const visibilities = ['public', 'private'] as const;
export type TopicVisibility = (typeof visibilities)[number];

export const NAME_MAX_LENGTH = 50;
export const DESCRIPTION_MAX_LENGTH = 200;

export interface TopicRow {
  id: string;
  team_id: string;
  name: string;
  description: string | null;
  /** Fixed at creation: what a contact who never chose is taken to have chosen. */
  default_subscription: TopicSubscription;
  visibility: TopicVisibility;
  created_at: Date;
  updated_at: Date;
}

export interface CreateTopicInput {
  name: string;
  default_subscription: TopicSubscription;
  description?: string | null;
  visibility?: TopicVisibility;
}

/** The fields a topic may change; `default_subscription` is not one of them. */
export interface UpdateTopicInput {
  name?: string;
  description?: string | null;
  visibility?: TopicVisibility;
}

export async function createTopic(db: Knex, teamId: string, input: CreateTopicInput): Promise<TopicRow> {
  const [row] = await db<TopicRow>('topics')
    .insert({
      id: newId(),
      team_id: teamId,
      name: input.name,
      description: input.description ?? null,
      default_subscription: input.default_subscription,
      visibility: input.visibility ?? 'private',
    })
    .returning('*');
  return row;
}

/**
 * The team's topic, or null: for an unknown id, another team's topic, and an id that is not a UUID at all (so
 * a caller may pass what a client wrote, e.g. `topic_id` of a send, without checking it first).
 */
export async function getTopic(db: Knex, teamId: string, id: string): Promise<TopicRow | null> {
  if (!isUuid(id)) return null;
  return (await db<TopicRow>('topics').where({ team_id: teamId, id }).first()) ?? null;
}

/** A page of the team's topics, newest first. */
export function listTopics(db: Knex, teamId: string, page: ListQuery) {
  return paginate<TopicRow>(db('topics').where({ team_id: teamId }), page);
}

/** Applies the given fields (an empty change only reads); null when the team has no such topic. */
export async function updateTopic(
  db: Knex,
  teamId: string,
  id: string,
  change: UpdateTopicInput,
): Promise<TopicRow | null> {
  if (!isUuid(id)) return null;
  const fields = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined));
  if (Object.keys(fields).length === 0) return getTopic(db, teamId, id);
  const [row] = await db<TopicRow>('topics')
    .where({ team_id: teamId, id })
    .update({ ...fields, updated_at: db.fn.now() })
    .returning('*');
  return row ?? null;
}

/** Deletes the team's topic; the deleted row, or null when there was none. */
export async function deleteTopic(db: Knex, teamId: string, id: string): Promise<TopicRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db<TopicRow>('topics').where({ team_id: teamId, id }).delete().returning('*');
  return row ?? null;
}
