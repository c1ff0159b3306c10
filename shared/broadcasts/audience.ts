// A broadcast's audience, materialised one batch at a time by ONE set-based statement: the segment's next members
// by contact id after the fan-out's cursor (hand members ∪ filter matches, as shared/segments/membership.ts walks
// them), of those the ones the broadcast may reach (not unsubscribed from everything; subscribed to its topic by
// their own choice, else by the topic's default), inserted into broadcast_recipients — `suppressed` when the team's
// suppression list has the address, `sent` otherwise — each address once (its unique key: a batch run again after
// a crash inserts nobody twice). Nothing of the segment is ever held in memory beyond one batch.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { compileFilter, filterContext } from '../segments/filter-sql.ts';
import type { SegmentRow } from '../segments/segments.ts';
import type { BatchRecipient } from './fanout-rows.ts';
import type { BroadcastRow } from './store.ts';

export interface MaterialisedBatch {
  /** Members the batch walked past (reached or not): fewer than the limit means the segment is done. */
  scanned: number;
  /** The last contact id walked past: the next batch starts after it. */
  lastId: string | null;
  /** Recipients to send to, with their contact's fields. */
  sent: BatchRecipient[];
  suppressed: number;
}

/** `select id` of the segment's next `limit` members after `after`, in id order (the SQL and its bindings). */
async function memberIds(db: Knex, segment: SegmentRow, after: string | null, limit: number) {
  const hand = `select m.contact_id as id from contact_segments m where m.segment_id = ?::uuid${after ? ' and m.contact_id > ?::uuid' : ''}
    order by m.contact_id limit ?`;
  const handBindings: Knex.Value[] = [segment.id, ...(after ? [after] : []), limit];
  if (!segment.filter) return { sql: hand, bindings: handBindings };
  const f = compileFilter(segment.filter, await filterContext(db, segment.team_id, segment.filter));
  const matched = `select c.id from contacts c where c.team_id = ?::uuid and ${f.sql}${after ? ' and c.id > ?::uuid' : ''}
    order by c.id limit ?`;
  return {
    sql: `select id from ((${matched}) union (${hand})) u order by id limit ?`,
    bindings: [segment.team_id, ...f.bindings, ...(after ? [after] : []), limit, ...handBindings, limit],
  };
}

/**
 * Materialises the next batch of `b`'s audience after `after` (in the caller's transaction). `limit`: members
 * walked per batch.
 */
export async function materialiseBatch(
  trx: Knex,
  b: BroadcastRow,
  segment: SegmentRow,
  topicDefault: 'opt_in' | 'opt_out' | null,
  after: string | null,
  limit: number,
): Promise<MaterialisedBatch> {
  const members = await memberIds(trx, segment, after, limit);
  const topic = b.topic_id
    ? `and coalesce((select s.subscription from topic_subscriptions s where s.topic_id = ?::uuid and s.email = lower(c.email)), ?) = 'opt_in'`
    : '';
  const topicBindings = b.topic_id ? [b.topic_id, topicDefault] : [];
  // Ids made here (UUID v7, so the reports page by creation): one for the row, one for its email, by position.
  const ids = Array.from({ length: limit }, () => newId());
  const emailIds = Array.from({ length: limit }, () => newId());
  const { rows } = await trx.raw(
    `with members as (${members.sql}),
    walked as (select c.id, c.email, c.first_name, c.last_name, c.properties, c.unsubscribed
      from contacts c join members m on m.id = c.id where c.team_id = ?::uuid),
    eligible as (select c.*, row_number() over (order by c.id) as n,
        exists (select 1 from suppressions x where x.team_id = ?::uuid and x.email = lower(c.email)) as suppressed
      from walked c where not c.unsubscribed ${topic}),
    inserted as (insert into broadcast_recipients (id, broadcast_id, team_id, contact_id, email, email_id, status, created_at)
      select (?::uuid[])[e.n], ?::uuid, ?::uuid, e.id, lower(e.email),
        case when e.suppressed then null else (?::uuid[])[e.n] end,
        case when e.suppressed then 'suppressed' else 'sent' end, now()
      from eligible e order by e.id
      on conflict (broadcast_id, email) do nothing
      returning contact_id, email, email_id, status)
    select (select count(*) from members)::int as scanned,
      (select id from members order by id desc limit 1) as last_id,
      coalesce((select json_agg(json_build_object('email_id', i.email_id, 'address', i.email, 'status', i.status,
        'email', w.email, 'first_name', w.first_name, 'last_name', w.last_name, 'properties', w.properties)
        order by i.email_id) from inserted i join walked w on w.id = i.contact_id), '[]'::json) as recipients`,
    [...members.bindings, b.team_id, b.team_id, ...topicBindings, ids, b.id, b.team_id, emailIds],
  );
  const [row] = rows as {
    scanned: number;
    last_id: string | null;
    recipients: (BatchRecipient & { status: string })[];
  }[];
  const sent = row.recipients.filter((r) => r.status === 'sent');
  return { scanned: row.scanned, lastId: row.last_id, sent, suppressed: row.recipients.length - sent.length };
}
