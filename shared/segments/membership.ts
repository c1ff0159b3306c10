// Who is in a segment: the contacts added by hand (contact_segments) and, when the segment has a filter, every
// contact of the team the filter matches. Computed in PostgreSQL at every read (never by loading contacts): the
// filter is one predicate (filter-sql.ts), and hand members and filter matches are read as two id-ordered streams
// merged by id, so a page reads about as many rows as it returns and a count is one statement.
import type { Knex } from 'knex';
import type { ListQuery } from '../pagination.ts';
import type { ContactRow } from '../contacts/rows.ts';
import type { FilterNode } from './filter-schema.ts';
import { compileFilter, filterContext, type Sql } from './filter-sql.ts';
import { checkFilterReferences } from './filter-check.ts';

/** What membership needs of a segment row. */
export interface SegmentScope {
  id: string;
  team_id: string;
  filter: FilterNode | null;
}

/**
 * Runs `work` in a transaction whose statements plan without JIT (compiling a scan of a million rows costs ~100 ms
 * and saves nothing here) and hash with 32 MB instead of 4 (a team's activity or choices hashed in one batch, not
 * spilled to disk). SET LOCAL: the settings end with the transaction (a caller's transaction keeps them to its end).
 */
function withPlanSettings<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`);
    return work(trx);
  });
}

async function predicate(db: Knex, segment: SegmentScope & { filter: FilterNode }): Promise<Sql> {
  return compileFilter(segment.filter, await filterContext(db, segment.team_id, segment.filter));
}

/** How many contacts are members: hand members, plus the contacts the filter matches that are not among them. */
export async function countMembers(db: Knex, segment: SegmentScope): Promise<number> {
  const { filter } = segment;
  if (!filter) {
    const [{ count }] = await db('contact_segments').where({ segment_id: segment.id }).count({ count: '*' });
    return Number(count);
  }
  return withPlanSettings(db, async (trx) => {
    const f = await predicate(trx, { ...segment, filter });
    const { rows } = await trx.raw(
      `select (select count(*) from contacts c where c.team_id = ? and ${f.sql})
        + (select count(*) from contact_segments m join contacts c on c.id = m.contact_id
           where m.segment_id = ? and not (${f.sql})) as count`,
      [segment.team_id, ...f.bindings, segment.id, ...f.bindings],
    );
    return Number(rows[0].count);
  });
}

/**
 * How many of the team's contacts `filter` matches now (an unsaved filter: the dashboard's live count), checked
 * against the team's properties and topics first, as a segment's filter is when saved.
 */
export async function countMatches(db: Knex, teamId: string, filter: FilterNode): Promise<number> {
  return withPlanSettings(db, async (trx) => {
    await checkFilterReferences(trx, teamId, filter);
    const f = compileFilter(filter, await filterContext(trx, teamId, filter));
    const { rows } = await trx.raw(`select count(*) as count from contacts c where c.team_id = ? and ${f.sql}`, [
      teamId,
      ...f.bindings,
    ]);
    return Number(rows[0].count);
  });
}

interface Window {
  limit: number;
  /** Ids after (`asc`) or before (`desc`) this one. */
  cursor?: string;
  order: 'asc' | 'desc';
  /** Only members whose address, first or last name contains it (without regard to case; data, not a pattern). */
  search?: string;
}

/** The search as a predicate on the contact `alias` (as shared/contacts/contacts.ts listContacts reads it). */
function searchSql(alias: string, search?: string): Sql | null {
  if (search === undefined) return null;
  const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const like = (column: string) => `lower(${alias}.${column}) like ? escape '\\'`;
  return {
    sql: ` and (${like('email')} or ${like('first_name')} or ${like('last_name')})`,
    bindings: [pattern, pattern, pattern],
  };
}

/** Up to `limit` members in id order from the cursor on, hand members and filter matches merged (each once). */
async function membersIn(db: Knex, segment: SegmentScope, w: Window): Promise<ContactRow[]> {
  const cmp = w.order === 'asc' ? '>' : '<';
  const cursor = (column: string) => (w.cursor ? { sql: ` and ${column} ${cmp} ?::uuid`, bindings: [w.cursor] } : null);
  const hand = cursor('m.contact_id');
  // With a search the hand members are read through their contacts (the search is on the contact's fields).
  const found = searchSql('h', w.search);
  const handIds = `select m.contact_id from contact_segments m${found ? ' join contacts h on h.id = m.contact_id' : ''}
    where m.segment_id = ?::uuid${hand?.sql ?? ''}${found?.sql ?? ''} order by m.contact_id ${w.order} limit ?`;
  const handBindings = [segment.id, ...(hand?.bindings ?? []), ...(found?.bindings ?? []), w.limit];
  const { filter } = segment;
  if (!filter) {
    const { rows } = await db.raw(
      `select c.* from contacts c where c.id in (${handIds}) and c.team_id = ? order by c.id ${w.order}`,
      [...handBindings, segment.team_id],
    );
    return rows;
  }
  return withPlanSettings(db, async (trx) => {
    const f = await predicate(trx, { ...segment, filter });
    const matched = cursor('c.id');
    const own = searchSql('c', w.search);
    const { rows } = await trx.raw(
      `select c.* from contacts c where c.id in (
        (select c.id from contacts c where c.team_id = ? and ${f.sql}${matched?.sql ?? ''}${own?.sql ?? ''}
          order by c.id ${w.order} limit ?)
        union (${handIds}))
      and c.team_id = ? order by c.id ${w.order} limit ?`,
      [
        segment.team_id,
        ...f.bindings,
        ...(matched?.bindings ?? []),
        ...(own?.bindings ?? []),
        w.limit,
        ...handBindings,
        segment.team_id,
        w.limit,
      ],
    );
    return rows;
  });
}

/**
 * A page of the segment's members, newest first, as shared/pagination.ts pages every list; `search` narrows them as
 * listContacts' search narrows the team's contacts.
 */
export async function pageMembers(
  db: Knex,
  segment: SegmentScope,
  page: ListQuery & { search?: string },
): Promise<{ has_more: boolean; rows: ContactRow[] }> {
  const limit = page.limit + 1;
  const { search } = page;
  if (page.before) {
    const rows = await membersIn(db, segment, { limit, cursor: page.before, order: 'asc', search });
    return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit).reverse() };
  }
  const rows = await membersIn(db, segment, { limit, cursor: page.after, order: 'desc', search });
  return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit) };
}

/**
 * The members after `after` (or from the first), oldest first (id order), at most `limit`: how another area
 * (a broadcast's fan-out) walks a segment, one page per call, each page starting after the last id of the one
 * before. Members that join or leave meanwhile are seen or not according to where the walk is.
 */
export function membersAfter(
  db: Knex,
  segment: SegmentScope,
  page: { after?: string; limit: number },
): Promise<ContactRow[]> {
  return membersIn(db, segment, { limit: page.limit, cursor: page.after, order: 'asc' });
}

/** Whether the contact (of the segment's team) is a member, by hand or by the filter. */
export async function isMember(db: Knex, segment: SegmentScope, contactId: string): Promise<boolean> {
  const byHand = await db('contact_segments')
    .where({ segment_id: segment.id, contact_id: contactId })
    .first('segment_id');
  if (byHand) return true;
  const { filter } = segment;
  if (!filter) return false;
  const f = await predicate(db, { ...segment, filter });
  const { rows } = await db.raw(`select 1 from contacts c where c.id = ?::uuid and c.team_id = ? and ${f.sql}`, [
    contactId,
    segment.team_id,
    ...f.bindings,
  ]);
  return rows.length > 0;
}
