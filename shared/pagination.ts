// One list helper for every area: newest first, cursors are item ids (UUID v7, so id order is creation order).
import { z } from 'zod';
import type { Knex } from 'knex';
import { ServiceError } from './errors.ts';

export const listQuery = z
  .object({
    // Digits only: `0x10`, `1e1` or ` 5` are not page sizes a client meant.
    limit: z
      .string()
      .regex(/^[0-9]{1,9}$/, 'must be a whole number from 1 to 100')
      .default('20')
      .transform(Number)
      .pipe(z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100'))
      .describe('1-100, default 20'),
    after: z.uuid().optional().describe('An item id: the page that follows it (older items).'),
    before: z.uuid().optional().describe('An item id: the page that precedes it (newer items).'),
  })
  .refine((q) => !(q.after && q.before), { message: '`after` and `before` cannot be used together.', path: ['after'] });

export type ListQuery = z.infer<typeof listQuery>;

export interface Page<T> {
  object: 'list';
  has_more: boolean;
  data: T[];
}

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });
}

/** A page of rows as the list envelope, each row shaped by `present`. */
export function toList<Row, Item>(page: { has_more: boolean; rows: Row[] }, present: (row: Row) => Item): Page<Item> {
  return { object: 'list', has_more: page.has_more, data: page.rows.map((r) => present(r)) };
}

/** Runs `query` (already filtered by team) one page at a time; `column` is the id column to order by. */
export async function paginate<Row>(
  query: Knex.QueryBuilder,
  page: ListQuery,
  column = 'id',
): Promise<{ has_more: boolean; rows: Row[] }> {
  const q = query.clone().limit(page.limit + 1);
  if (page.before) {
    const rows: Row[] = await q.where(column, '>', page.before).orderBy(column, 'asc');
    const has_more = rows.length > page.limit;
    return { has_more, rows: rows.slice(0, page.limit).reverse() };
  }
  if (page.after) q.where(column, '<', page.after);
  const rows: Row[] = await q.orderBy(column, 'desc');
  return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit) };
}

/**
 * Pages of rows kept in a fixed order (`position` ascending: an email's attachments in part order) while the
 * cursors are still item ids. `query` is already filtered to the parent; a cursor that is not one of its rows
 * is a validation_error naming `what` the cursor must be.
 */
export async function paginateByPosition<Row>(
  query: Knex.QueryBuilder,
  page: ListQuery,
  what: string,
): Promise<{ has_more: boolean; rows: Row[] }> {
  const cursorId = page.after ?? page.before;
  let cursor: number | undefined;
  if (cursorId) {
    const row = await query.clone().where({ id: cursorId }).first('position');
    if (!row) {
      const path = page.after ? 'after' : 'before';
      throw new ServiceError('validation_error', `Invalid query parameter \`${path}\`: not ${what}.`, {
        errors: [{ path, message: `not ${what}` }],
      });
    }
    cursor = row.position;
  }
  if (page.before && cursor !== undefined) {
    const rows: Row[] = await query
      .clone()
      .where('position', '<', cursor)
      .orderBy('position', 'desc')
      .limit(page.limit + 1);
    return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit).reverse() };
  }
  const q = query
    .clone()
    .orderBy('position', 'asc')
    .limit(page.limit + 1);
  if (cursor !== undefined) q.where('position', '>', cursor);
  const rows: Row[] = await q;
  return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit) };
}
