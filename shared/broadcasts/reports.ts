// A broadcast's reports: its recipients by what happened to their copy, its clicked links, its counts. Read from
// the rows the fan-out, the mta, the tracking host and the unsubscribe link write (broadcast_recipients,
// email_recipients, email_engagements); opens and clicks count humans only (engagements with no `machine` rule).
// Each list pages by the broadcast_recipients id (UUID v7: newest first), as every list of the API pages.
import type { Knex } from 'knex';
import { paginate, type ListQuery } from '../pagination.ts';

export const recipientTypes = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
] as const;
export type RecipientType = (typeof recipientTypes)[number];
export const bounceTypes = ['permanent', 'transient', 'undetermined'] as const;

export interface RecipientFilter {
  type: RecipientType;
  email?: string;
  bounce_type?: (typeof bounceTypes)[number];
}

export interface RecipientReportRow {
  id: string;
  contact_id: string | null;
  email: string;
  bounce_type: string | null;
  count: number | null;
  clicked_links: { url: string; clicks: number }[] | null;
}

const HUMAN_COUNT = (kind: 'open' | 'click') =>
  `(select count(*) from email_engagements g where g.email_id = r.email_id and g.kind = '${kind}' and g.machine is null)::int`;

/** A page of the broadcast's recipients of one type. */
export function recipientsPage(db: Knex, broadcastId: string, f: RecipientFilter, page: ListQuery) {
  const q = db('broadcast_recipients as r').where('r.broadcast_id', broadcastId);
  if (f.email) q.where('r.email', f.email.trim().toLowerCase());
  const cols = ['r.id', 'r.contact_id', 'r.email'];
  if (f.type === 'suppressed') q.where('r.status', 'suppressed');
  else q.where('r.status', 'sent');
  const delivery = () => q.join('email_recipients as er', 'er.email_id', 'r.email_id');
  switch (f.type) {
    case 'delivered':
      delivery().where('er.status', 'delivered');
      break;
    case 'bounced':
      delivery().where('er.status', 'bounced');
      if (f.bounce_type) q.whereRaw('lower(er.bounce_type) = ?', [f.bounce_type]);
      cols.push(db.raw('lower(er.bounce_type) as bounce_type') as never);
      break;
    case 'complained':
      delivery().whereNotNull('er.complained_at');
      break;
    case 'opened':
    case 'clicked': {
      const kind = f.type === 'opened' ? 'open' : 'click';
      q.whereExists(
        db('email_engagements as g')
          .whereRaw('g.email_id = r.email_id')
          .where({ 'g.kind': kind })
          .whereNull('g.machine'),
      );
      cols.push(db.raw(`${HUMAN_COUNT(kind)} as count`) as never);
      if (kind === 'click')
        cols.push(
          db.raw(`(select json_agg(json_build_object('url', l.link, 'clicks', l.clicks)) from (select g.link, count(*)::int as clicks
            from email_engagements g where g.email_id = r.email_id and g.kind = 'click' and g.machine is null group by g.link) l) as clicked_links`) as never,
        );
      break;
    }
    case 'unsubscribed':
      // Who used this copy's own unsubscribe link (recorded on its recipient row, shared/topics/unsubscribe.ts).
      delivery().whereNotNull('er.unsubscribed_at');
      break;
  }
  return paginate<RecipientReportRow>(q.select(cols), page, 'r.id');
}

export interface ClickedLinkRow {
  id: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}

/** A page of the links the broadcast's recipients clicked (humans only); `id` is an opaque cursor made of the URL. */
export function clickedLinksPage(db: Knex, broadcastId: string, page: ListQuery) {
  const links = db('email_engagements as g')
    .join('emails as e', 'e.id', 'g.email_id')
    .where({ 'e.broadcast_id': broadcastId, 'g.kind': 'click' })
    .whereNull('g.machine')
    .whereNotNull('g.link')
    .groupBy('g.link')
    .select(
      // The link's md5 shaped as a version-4 UUID (version nibble 4, variant 8): an id the API's uuid format accepts.
      db.raw(`overlay(overlay(md5(g.link) placing '4' from 13) placing '8' from 17)::uuid as id`),
      'g.link as url',
      db.raw('count(*)::int as clicks'),
      db.raw('count(distinct g.recipient_id)::int as unique_clicks'),
    );
  return paginate<ClickedLinkRow>(db.from(links.as('l')).select('*'), page, 'l.id');
}

export interface BroadcastCounts {
  recipients: number;
  suppressed: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
}

/** What the broadcast's copies have come to so far. */
export async function broadcastCounts(
  db: Knex,
  b: { id: string; recipients_count: number; suppressed_count: number },
): Promise<BroadcastCounts> {
  const {
    rows: [row],
  } = await db.raw(
    `select count(*) filter (where er.status = 'delivered')::int as delivered,
      count(*) filter (where er.status = 'bounced')::int as bounced,
      count(er.complained_at)::int as complained,
      count(x.first_opened_at)::int as opened,
      count(x.first_clicked_at)::int as clicked
    from emails e join email_recipients er on er.email_id = e.id
    left join email_recipient_engagement x on x.recipient_id = er.id
    where e.broadcast_id = ?`,
    [b.id],
  );
  return { recipients: b.recipients_count, suppressed: b.suppressed_count, ...row };
}
