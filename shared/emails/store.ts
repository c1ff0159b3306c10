// Reads and the few changes a customer can make to a sent email: reschedule and cancel (until released).
import type { Knex } from 'knex';
import { notFound, ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { containsPattern } from '../db/contains.ts';
import { eventRow, insertEvents, recordEvent } from '../events.ts';
import { EMAIL_EVENT_COLUMNS, emailEventData, type EmailRow } from './present.ts';

export async function getEmail(db: Knex, teamId: string, id: string): Promise<EmailRow> {
  const row = await db<EmailRow>('emails').where({ id, team_id: teamId }).first();
  if (!row) throw notFound('Email');
  return row;
}

export interface EmailListQuery extends ListQuery {
  search?: string;
}

/**
 * A page of the team's emails, newest first; with `search`, only those whose subject, sender (`Name <address>` as
 * written, so name and address) or any recipient (to, cc, bcc as written) contains it without regard to case,
 * as GET /emails/receiving searches received mail. The text is data, never a pattern: ILIKE with every
 * metacharacter escaped. No index serves a substring: a search few emails match reads the team's emails newest
 * first until it has a page.
 */
export function listEmails(db: Knex, teamId: string, page: EmailListQuery) {
  const q = db('emails').where({ team_id: teamId });
  if (page.search !== undefined) {
    const pattern = containsPattern(page.search);
    q.where((w) =>
      w
        .whereRaw(`subject ilike ? escape '\\'`, [pattern])
        .orWhereRaw(`"from" ilike ? escape '\\'`, [pattern])
        .orWhereRaw(
          `exists (select 1 from unnest("to" || cc || bcc) as r(address) where r.address ilike ? escape '\\')`,
          [pattern],
        ),
    );
  }
  return paginate<EmailRow>(q, page);
}

export async function reschedule(db: Knex, teamId: string, id: string, when: Date): Promise<EmailRow> {
  return db.transaction(async (trx) => {
    const [row] = await trx<EmailRow>('emails')
      .where({ id, team_id: teamId, status: 'scheduled' })
      .update({ scheduled_at: when, updated_at: new Date() })
      .returning('*');
    if (!row) {
      await getEmail(trx, teamId, id);
      throw new ServiceError(
        'validation_error',
        'Only a scheduled email that has not been released can be rescheduled.',
        { status: 422 },
      );
    }
    await trx('email_recipients').where({ email_id: id, status: 'queued' }).update({ next_attempt_at: when });
    await recordEvent(trx, teamId, 'email.scheduled', emailEventData(row));
    return row;
  });
}

export async function cancel(db: Knex, teamId: string, id: string): Promise<EmailRow> {
  return db.transaction(async (trx) => {
    const [row] = await trx<EmailRow>('emails')
      .where({ id, team_id: teamId, status: 'scheduled' })
      .update({ status: 'canceled', last_event: 'canceled', updated_at: new Date() })
      .returning('*');
    if (!row) {
      await getEmail(trx, teamId, id);
      throw new ServiceError('validation_error', 'Only a scheduled email that has not been released can be canceled.', {
        status: 422,
      });
    }
    await trx('email_recipients')
      .where({ email_id: id, status: 'queued' })
      .update({ status: 'canceled', next_attempt_at: null });
    await recordEvent(trx, teamId, 'email.canceled', emailEventData(row));
    return row;
  });
}

/** A released email as the worker logs it. */
export type Released = Pick<EmailRow, 'id' | 'team_id' | 'request_id'>;

/** releaseDue's ids. */
export async function releaseDue(db: Knex, now: Date, limit = 500): Promise<string[]> {
  return (await releaseDueEmails(db, now, limit)).map((e) => e.id);
}

/**
 * The worker's release of up to `limit` scheduled emails whose time has come (conditional: a cancel in between
 * wins), each with its email.sent in the same transaction: from here it is sent as an immediate send is.
 */
export async function releaseDueEmails(db: Knex, now: Date, limit = 500): Promise<Released[]> {
  return db.transaction(async (trx) => {
    const rows: Pick<EmailRow, (typeof EMAIL_EVENT_COLUMNS)[number] | 'request_id'>[] = await trx('emails')
      .whereIn(
        'id',
        trx('emails')
          .select('id')
          .where({ status: 'scheduled' })
          .where('scheduled_at', '<=', now)
          // A team whose deletion is scheduled sends nothing; canceling the deletion releases them late.
          .whereNotIn('team_id', trx('teams').select('id').whereNot({ deletion_status: 'none' }))
          .orderBy('scheduled_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .update({ status: 'queued', last_event: 'sent', updated_at: now })
      .returning([...EMAIL_EVENT_COLUMNS, 'request_id']);
    if (rows.length)
      await insertEvents(
        trx,
        rows.map((row) => eventRow(row.team_id, 'email.sent', emailEventData(row))),
      );
    return rows.map((r) => ({ id: r.id, team_id: r.team_id, request_id: r.request_id }));
  });
}
