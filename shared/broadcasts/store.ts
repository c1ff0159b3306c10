// Broadcasts: the rows and their lifecycle moves (docs/broadcasts.md). Every function takes `db` first and the
// team; every move is one conditional UPDATE on the status it leaves (`WHERE status IN (...)`), so two requests
// racing for the same move see one of them win and the other answered with the state it found.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { BlockDocument } from '../templates/blocks.ts';

export const statuses = ['draft', 'queued', 'scheduled', 'sending', 'sent', 'canceled', 'failed'] as const;
export type BroadcastStatus = (typeof statuses)[number];

export interface BroadcastRow {
  id: string;
  team_id: string;
  name: string | null;
  segment_id: string | null;
  topic_id: string | null;
  from: string;
  reply_to: string[];
  subject: string;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  /** The block document the html and text were rendered from; null when written as html. */
  document: BlockDocument | null;
  /** The template the content was copied from at create time (a snapshot), if any. */
  template_id: string | null;
  status: BroadcastStatus;
  scheduled_at: Date | null;
  started_at: Date | null;
  sent_at: Date | null;
  canceled_at: Date | null;
  failure_reason: string | null;
  cursor: string | null;
  lease_token: string | null;
  leased_until: Date | null;
  recipients_count: number;
  /** The segment's size when the send was accepted, held against the monthly marketing allowance (gate.ts). */
  audience_reserved: number | null;
  suppressed_count: number;
  batches: number;
  created_at: Date;
  updated_at: Date;
}

/** What a create or an update may set. */
export interface BroadcastContent {
  name?: string | null;
  segment_id?: string;
  topic_id?: string | null;
  from?: string;
  reply_to?: string[];
  subject?: string;
  preview_text?: string | null;
  html?: string | null;
  text?: string | null;
  document?: BlockDocument | null;
  template_id?: string | null;
}

/** The jsonb column as written (node-pg would send an array as a PG array, so it is always serialised here). */
const jsonb = (doc: BlockDocument | null | undefined) =>
  doc === undefined ? undefined : doc === null ? null : JSON.stringify(doc);

/** Statuses a cancel stops (sending stops before its next batch). */
export const CANCELABLE: BroadcastStatus[] = ['queued', 'scheduled', 'sending'];

export async function getBroadcast(db: Knex, teamId: string, id: string): Promise<BroadcastRow | null> {
  if (!isUuid(id)) return null;
  return (await db<BroadcastRow>('broadcasts').where({ team_id: teamId, id }).first()) ?? null;
}

export async function mustGet(db: Knex, teamId: string, id: string): Promise<BroadcastRow> {
  const row = await getBroadcast(db, teamId, id);
  if (!row) throw new ServiceError('not_found', 'Broadcast not found.');
  return row;
}

export function listBroadcasts(db: Knex, teamId: string, page: ListQuery) {
  return paginate<BroadcastRow>(db('broadcasts').where({ team_id: teamId }), page);
}

export async function insertBroadcast(
  db: Knex,
  teamId: string,
  content: Required<Pick<BroadcastContent, 'from' | 'subject' | 'segment_id'>> & BroadcastContent,
): Promise<BroadcastRow> {
  const [row] = await db<BroadcastRow>('broadcasts')
    .insert({
      id: newId(),
      team_id: teamId,
      name: content.name ?? null,
      segment_id: content.segment_id,
      topic_id: content.topic_id ?? null,
      from: content.from,
      reply_to: content.reply_to ?? [],
      subject: content.subject,
      preview_text: content.preview_text ?? null,
      html: content.html ?? null,
      text: content.text ?? null,
      document: jsonb(content.document ?? null) as never,
      template_id: content.template_id ?? null,
      status: 'draft',
    })
    .returning('*');
  return row;
}

/** A refusal of a move from the status the broadcast is in. */
export function wrongStatus(row: Pick<BroadcastRow, 'status'>, doing: string, allowed: string): ServiceError {
  return new ServiceError(
    'validation_error',
    `This broadcast is ${row.status}: only a broadcast that is ${allowed} can be ${doing}.`,
    { details: { status: row.status } },
  );
}

/** Changes a draft's content; a broadcast past draft is refused with its status. */
export async function updateDraft(
  db: Knex,
  teamId: string,
  id: string,
  change: BroadcastContent,
): Promise<BroadcastRow> {
  const row = await mustGet(db, teamId, id);
  const defined = Object.fromEntries(
    Object.entries({ ...change, document: jsonb(change.document) }).filter(([, v]) => v !== undefined),
  );
  const [updated] = await db<BroadcastRow>('broadcasts')
    .where({ team_id: teamId, id, status: 'draft' })
    .update({ ...defined, updated_at: db.fn.now() as never })
    .returning('*');
  if (!updated) throw wrongStatus(row, 'updated', 'a draft');
  return updated;
}

/** Deletes a draft (its recipients have none yet); others are refused with their status. */
export async function deleteDraft(db: Knex, teamId: string, id: string): Promise<BroadcastRow> {
  const row = await mustGet(db, teamId, id);
  const [gone] = await db<BroadcastRow>('broadcasts').where({ team_id: teamId, id, status: 'draft' }).delete('*');
  if (!gone) throw wrongStatus(row, 'deleted', 'a draft');
  return gone;
}

/**
 * Cancels a queued, scheduled or sending broadcast. Under the row lock a fan-out batch takes, so a batch either
 * committed before (its recipients got it, and are recorded) or sees `canceled` and adds nobody. A cancel that came
 * while the last batch held the lock waits for its commit, finds `sent` and is refused with the status it found
 * then: the row is read again for the answer (the one read before the wait still says `sending`).
 */
export async function cancelBroadcast(db: Knex, teamId: string, id: string): Promise<BroadcastRow> {
  await mustGet(db, teamId, id);
  const [canceled] = await db<BroadcastRow>('broadcasts')
    .where({ team_id: teamId, id })
    .whereIn('status', CANCELABLE)
    .update({ status: 'canceled', canceled_at: db.fn.now() as never, updated_at: db.fn.now() as never })
    .returning('*');
  if (!canceled) throw wrongStatus(await mustGet(db, teamId, id), 'canceled', 'queued, scheduled or sending');
  return canceled;
}

/** A new draft with the content of `id` (any status); its name marked as a copy. */
export async function duplicateBroadcast(db: Knex, teamId: string, id: string): Promise<BroadcastRow> {
  const row = await mustGet(db, teamId, id);
  return insertBroadcast(db, teamId, {
    name: row.name === null ? null : `${row.name} (copy)`.slice(0, 200),
    segment_id: row.segment_id ?? '',
    topic_id: row.topic_id,
    from: row.from,
    reply_to: row.reply_to,
    subject: row.subject,
    preview_text: row.preview_text,
    html: row.html,
    text: row.text,
    document: row.document,
    template_id: row.template_id,
  });
}
